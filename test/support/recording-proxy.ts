// A loopback proxy in front of the local engines that writes down, for one function, every AWS
// call it makes as IAM sees it: the action and the resource (a table, an index, a kind of S3 key,
// the queue, a secret). Pointing a Lambda's AWS_ENDPOINT_URL_* at it shows what its policy must allow.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One call as IAM authorises it. */
export interface IamCall {
  action: string;
  /** "table", "index/<name>", "objects/<prefix>/", "bucket", "queue", "secret". */
  resource: string;
  /** For s3:PutObject: the If-None-Match header it carried. */
  ifNoneMatch?: string;
}

export interface RecordingProxy {
  url: string;
  calls: IamCall[];
  close(): Promise<void>;
}

/** DynamoDB operations whose IAM action is another's (transactions authorise item by item). */
const TRANSACT_ITEM_ACTIONS: Record<string, string> = {
  Put: "dynamodb:PutItem",
  Update: "dynamodb:UpdateItem",
  Delete: "dynamodb:DeleteItem",
  ConditionCheck: "dynamodb:ConditionCheckItem",
  Get: "dynamodb:GetItem",
};

export async function startRecordingProxy(upstream: {
  dynamo: string;
  moto: string;
}): Promise<RecordingProxy> {
  const calls: IamCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const target = String(req.headers["x-amz-target"] ?? "");
      const recorded = target.startsWith("DynamoDB_")
        ? dynamoCalls(target, body)
        : target.startsWith("AmazonSQS.")
          ? [{ action: `sqs:${target.slice("AmazonSQS.".length)}`, resource: "queue" }]
          : target.startsWith("secretsmanager.")
            ? [{ action: `secretsmanager:${target.slice("secretsmanager.".length)}`, resource: "secret" }]
            : [];
      calls.push(...recorded);
      const base = new URL(target.startsWith("DynamoDB_") ? upstream.dynamo : upstream.moto);
      const forwarded = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: base.host },
        },
        (upstreamResponse) => {
          if (target === "") calls.push(...s3Calls(req, upstreamResponse.statusCode ?? 0));
          res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
          upstreamResponse.pipe(res);
        },
      );
      forwarded.on("error", (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function dynamoCalls(target: string, body: Buffer): IamCall[] {
  const operation = target.split(".")[1] ?? "";
  const input = JSON.parse(body.toString("utf8") || "{}") as {
    IndexName?: string;
    TransactItems?: Array<Record<string, unknown>>;
  };
  if (operation === "TransactWriteItems" || operation === "TransactGetItems")
    return (input.TransactItems ?? []).map((item) => ({
      action: TRANSACT_ITEM_ACTIONS[Object.keys(item)[0] ?? ""] ?? `dynamodb:${operation}`,
      resource: "table",
    }));
  return [
    {
      action: `dynamodb:${operation}`,
      resource: input.IndexName === undefined ? "table" : `index/${input.IndexName}`,
    },
  ];
}

/** S3's REST calls (path style: /bucket/key). A missing key read as 404 needs s3:ListBucket. */
function s3Calls(req: IncomingMessage, status: number): IamCall[] {
  const url = new URL(req.url ?? "/", "http://s3");
  const key = decodeURIComponent(url.pathname.split("/").slice(2).join("/"));
  if (key === "") return [{ action: "s3:ListBucket", resource: "bucket" }];
  const objects = `objects/${key.split("/")[0]}/`;
  if (req.method === "PUT")
    return [
      {
        action: "s3:PutObject",
        resource: objects,
        ...(req.headers["if-none-match"] === undefined
          ? {}
          : { ifNoneMatch: String(req.headers["if-none-match"]) }),
      },
    ];
  const read = { action: "s3:GetObject", resource: objects };
  return status === 404 ? [read, { action: "s3:ListBucket", resource: "bucket" }] : [read];
}
