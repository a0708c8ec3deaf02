import type { SecretsProvider } from "@aws-lambda-powertools/parameters/secrets";

/**
 * An API key kept in AWS Secrets Manager, read through Powertools' parameters utility when a call
 * first needs it and kept in its in-process cache for `maxAgeSeconds` (15 minutes by default), so
 * a rotated key is picked up without a deploy and no key ever sits in a function's environment.
 * The secret is the key itself, or JSON with an `apiKey` field. The SDK loads on the first read:
 * functions that never call a model never pay for it. The provider is given our own client, so
 * `instrument` (the tracer) sees the read as it sees every other AWS call.
 */
export function secretKey(
  secretId: string,
  options: { instrument?: <T extends object>(client: T) => T; maxAgeSeconds?: number } = {},
): () => Promise<string> {
  let provider: SecretsProvider | undefined;
  // A secret that held no key is read afresh on the next call, not served from the cache.
  let refetch = false;
  return async () => {
    if (!provider) {
      const [{ SecretsProvider }, { SecretsManagerClient }] = await Promise.all([
        import("@aws-lambda-powertools/parameters/secrets"),
        import("@aws-sdk/client-secrets-manager"),
      ]);
      const client = new SecretsManagerClient({});
      provider = new SecretsProvider({ awsSdkV3Client: options.instrument?.(client) ?? client });
    }
    const secret = await provider.get(secretId, {
      maxAge: options.maxAgeSeconds ?? 15 * 60,
      forceFetch: refetch,
    });
    const key = keyOf(typeof secret === "string" ? secret : "");
    refetch = key === "";
    if (key === "")
      throw new Error(`the secret ${secretId} holds no API key (a string, or JSON with "apiKey")`);
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
