import { GetSecretValueCommand, type SecretsManagerClient } from "@aws-sdk/client-secrets-manager";

/**
 * An API key kept in AWS Secrets Manager, read when first needed and again after `ttlMs`, so a
 * rotated key is picked up without a deploy and no key ever sits in a function's environment.
 * The secret is the key itself, or JSON with an `apiKey` field.
 */
export function secretKey(
  client: SecretsManagerClient,
  secretId: string,
  ttlMs = 15 * 60_000,
): () => Promise<string> {
  let cached: { key: string; until: number } | undefined;
  return async () => {
    if (cached && cached.until > Date.now()) return cached.key;
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    const key = keyOf(SecretString ?? "");
    if (key === "")
      throw new Error(`the secret ${secretId} holds no API key (a string, or JSON with "apiKey")`);
    cached = { key, until: Date.now() + ttlMs };
    return key;
  };
}

function keyOf(secret: string): string {
  const trimmed = secret.trim();
  if (!trimmed.startsWith("{")) return trimmed;
  try {
    const parsed = JSON.parse(trimmed) as { apiKey?: unknown };
    return typeof parsed.apiKey === "string" ? parsed.apiKey : "";
  } catch {
    return trimmed;
  }
}
