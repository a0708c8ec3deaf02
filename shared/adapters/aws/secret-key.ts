import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";

/**
 * An API key kept in AWS Secrets Manager, read when first needed and again after `ttlMs`, so a
 * rotated key is picked up without a deploy and no key ever sits in a function's environment.
 * The secret is the key itself, or JSON with an `apiKey` field. The SDK loads on the first read:
 * functions that never call a model never pay for it.
 */
export function secretKey(
  secretId: string,
  options: { instrument?: <T extends object>(client: T) => T; ttlMs?: number } = {},
): () => Promise<string> {
  let client: SecretsManagerClient | undefined;
  let cached: { key: string; until: number } | undefined;
  return async () => {
    if (cached && cached.until > Date.now()) return cached.key;
    const sdk = await import("@aws-sdk/client-secrets-manager");
    if (!client) {
      const created = new sdk.SecretsManagerClient({});
      client = options.instrument ? options.instrument(created) : created;
    }
    const { SecretString } = await client.send(new sdk.GetSecretValueCommand({ SecretId: secretId }));
    const key = keyOf(SecretString ?? "");
    if (key === "")
      throw new Error(`the secret ${secretId} holds no API key (a string, or JSON with "apiKey")`);
    cached = { key, until: Date.now() + (options.ttlMs ?? 15 * 60_000) };
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
