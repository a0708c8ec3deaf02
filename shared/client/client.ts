import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { z } from "zod";
import type { AppendOutcome } from "#app/append.ts";
import type { Recall } from "#app/recall.ts";
import type { Review } from "#app/review.ts";
import type { Snapshot, TrustPolicy } from "#domain/schemas.ts";
import type { ArtifactRecord } from "#ports/artifact-records.ts";
import type { TenantSettings } from "#ports/settings.ts";

/** What an agent sends: a MemoryEvent (CONTRACT §1) before the store assigns its sequence. */
export type MemoryEventInput = Record<string, unknown> & { eventId: string; kind: string };

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface MemgateClientOptions {
  /** The API's base URL: `memgate serve`'s URL or the tenant stack's HTTP API endpoint. */
  baseUrl: string;
  /** `memgate serve --token`: sent as Authorization: Bearer. */
  token?: string;
  /** API Gateway with IAM authorization: requests are signed with SigV4 for execute-api. */
  sigv4?: {
    region: string;
    /** Default: the standard AWS credential chain (environment, profile, role). */
    credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  };
  /** A JWT for an API whose tenant uses a JWT authorizer: sent as Authorization: Bearer. */
  jwt?: string | (() => Promise<string>);
  /** Replaces the global fetch (tests route requests to an in-process router). */
  fetch?: (request: Request) => Response | Promise<Response>;
}

const Problem = z.object({
  error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }),
});

/** An answer other than 2xx: the contract's error with its code and field. */
export class MemgateApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field: string | undefined,
    /** Seconds to wait before retrying (429, 503). */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "MemgateApiError";
  }
}

export interface Clock {
  highWater: number;
  inputEpoch: number;
  alias: { artifactId: string; sourceEpoch: number; coversThrough: number } | null;
}

export type AppendAnswer = Pick<
  AppendOutcome,
  "appended" | "duplicates" | "highWater" | "inputEpoch" | "epochMoved" | "staled" | "rebuildRequested"
>;

export interface RecallQuery {
  scope?: string;
  budget?: number;
  query?: string;
  cursor?: string;
}

/** The recall route's path with its query string. */
function recallPath(subject: string, query: RecallQuery & { format?: "text" }): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  const suffix = search.size > 0 ? `?${search}` : "";
  return `/v1/subjects/${enc(subject)}/recall${suffix}`;
}

export type ArtifactListing = ArtifactRecord & { status: string; lifecycle: string };

/**
 * The typed client of the HTTP API (CONTRACT §6), for `memgate serve` (bearer token) and for
 * API Gateway (SigV4 for IAM authorization, or a JWT). Every method is one request; an answer
 * other than 2xx throws MemgateApiError with the contract's code and field.
 */
export class MemgateClient {
  private readonly baseUrl: string;
  private signer: SignatureV4 | null = null;

  constructor(private readonly options: MemgateClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
  }

  append(subject: string, events: readonly MemoryEventInput[]): Promise<AppendAnswer> {
    return this.request("POST", `/v1/subjects/${enc(subject)}/events`, { events });
  }

  revoke(
    subject: string,
    eventIds: readonly string[],
    reason?: string,
  ): Promise<Clock & { staled: string[] }> {
    return this.request("POST", `/v1/subjects/${enc(subject)}/revocations`, {
      eventIds,
      ...(reason === undefined ? {} : { reason }),
    });
  }

  clock(subject: string): Promise<Clock> {
    return this.request("GET", `/v1/subjects/${enc(subject)}/clock`);
  }

  /** The recall as JSON (CONTRACT §5, §6). */
  recall(subject: string, query: RecallQuery = {}): Promise<Recall> {
    return this.request("GET", recallPath(subject, query));
  }

  /** The recall as an agent reads it in a prompt (CONTRACT §5a): `format=text`, the budget counting the text. */
  recallText(subject: string, query: RecallQuery = {}): Promise<string> {
    return this.request("GET", recallPath(subject, { ...query, format: "text" }));
  }

  consolidate(subject: string): Promise<{ snapshot: Snapshot; queued: boolean; artifactId?: string }> {
    return this.request("POST", `/v1/subjects/${enc(subject)}/consolidations`);
  }

  async artifacts(subject: string): Promise<ArtifactListing[]> {
    return (
      await this.request<{ artifacts: ArtifactListing[] }>("GET", `/v1/subjects/${enc(subject)}/artifacts`)
    ).artifacts;
  }

  artifact(artifactId: string): Promise<{ record: ArtifactListing; manifest: unknown; body: unknown }> {
    return this.request("GET", `/v1/artifacts/${enc(artifactId)}`);
  }

  lineage(artifactId: string, format: "prov-json"): Promise<Record<string, unknown>>;
  lineage(artifactId: string, format: "dot"): Promise<string>;
  lineage(artifactId: string, format: "prov-json" | "dot" = "prov-json"): Promise<unknown> {
    return this.request("GET", `/v1/artifacts/${enc(artifactId)}/lineage?format=${format}`);
  }

  review(subject: string): Promise<Pick<Review, "current" | "shadows">> {
    return this.request("GET", `/v1/subjects/${enc(subject)}/review`);
  }

  approve(artifactId: string): Promise<unknown> {
    return this.request("POST", `/v1/artifacts/${enc(artifactId)}/approve`);
  }

  policy(subject: string): Promise<TrustPolicy> {
    return this.request("GET", `/v1/subjects/${enc(subject)}/policy`);
  }

  setPolicy(subject: string, policy: TrustPolicy): Promise<unknown> {
    return this.request("PUT", `/v1/subjects/${enc(subject)}/policy`, policy);
  }

  settings(): Promise<TenantSettings> {
    return this.request("GET", "/v1/settings");
  }

  updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings> {
    return this.request("PUT", "/v1/settings", patch);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    const headers: Record<string, string> = { accept: "application/json", host: url.host };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers["content-type"] = "application/json";
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    if (this.options.jwt !== undefined)
      headers.authorization = `Bearer ${typeof this.options.jwt === "string" ? this.options.jwt : await this.options.jwt()}`;
    if (this.options.sigv4) Object.assign(headers, await this.sign(method, url, headers, payload));
    const { host: _host, ...sent } = headers;
    const request = new Request(url, {
      method,
      headers: sent,
      ...(payload === undefined ? {} : { body: payload }),
    });
    const response = await (this.options.fetch ?? fetch)(request);
    const text = await response.text();
    if (!response.ok) {
      const problem = Problem.safeParse(safeJson(text));
      const retryAfter = response.headers.get("retry-after");
      throw new MemgateApiError(
        response.status,
        problem.success ? problem.data.error.code : "http-error",
        problem.success ? problem.data.error.message : text.slice(0, 200) || response.statusText,
        problem.success ? problem.data.error.field : undefined,
        retryAfter === null ? undefined : Number(retryAfter),
      );
    }
    const type = response.headers.get("content-type") ?? "";
    return (type.includes("json") ? JSON.parse(text) : text) as T;
  }

  private async sign(
    method: string,
    url: URL,
    headers: Record<string, string>,
    payload: string | undefined,
  ): Promise<Record<string, string>> {
    const settings = this.options.sigv4;
    if (!settings) return {};
    if (!this.signer) {
      const credentials =
        settings.credentials ?? (await import("@aws-sdk/credential-provider-node")).defaultProvider();
      this.signer = new SignatureV4({
        service: "execute-api",
        region: settings.region,
        credentials,
        sha256: Sha256,
      });
    }
    const signed = await this.signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      ...(payload === undefined ? {} : { body: payload }),
    });
    return signed.headers;
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
