// Realistic Lambda events for handler tests: API Gateway HTTP API (payload 2.0), SQS (from real
// received messages) and DynamoDB Streams (from real stream records of DynamoDB Local).
import { randomUUID } from "node:crypto";
import type { _Record as StreamRecord } from "@aws-sdk/client-dynamodb-streams";
import type { Message } from "@aws-sdk/client-sqs";
import type {
  APIGatewayProxyEventV2,
  Context,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSEvent,
} from "aws-lambda";
import { API_ROUTES } from "#runtime/api-roles.ts";

export function lambdaContext(functionName = "memgate-test"): Context {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "2026/11/30/[$LATEST]test",
    getRemainingTimeInMillis: () => Math.max(0, 900_000 - (Date.now() - started)),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/**
 * How API Gateway matches a route, which its documentation leaves open: on the path as sent (a
 * parameter is one encoded segment, decoded after), or on the path decoded first (a `%2F` then
 * splits segments). The api function must serve the route it is handed either way.
 */
export type GatewayMatching = "as-sent" | "decoded";

/**
 * Percent-decoding as a gateway may hand text on: each `%XX` run that decodes is decoded, any other
 * kept as sent (the HTTP API refuses some such paths itself; a function must not rely on it).
 */
export function decodedLeniently(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** The tenant stack's route a request matches (API_ROUTES), with its decoded path parameters. */
function routeOf(
  method: string,
  sentPath: string,
  matching: GatewayMatching,
): { path: string; pathParameters?: Record<string, string> } | undefined {
  const sent = matching === "as-sent" ? sentPath.split("/") : decodedLeniently(sentPath).split("/");
  for (const route of API_ROUTES) {
    if (route.method !== method) continue;
    const template = route.path.split("/");
    if (template.length !== sent.length) continue;
    const pathParameters: Record<string, string> = {};
    const matches = template.every((part, i) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      const value = sent[i] ?? "";
      if (name === undefined) return part === value;
      pathParameters[name] = matching === "as-sent" ? decodedLeniently(value) : value;
      return value !== "";
    });
    if (matches)
      return { path: route.path, ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}) };
  }
  return undefined;
}

/** What a test sets by hand in an event API Gateway would not send as such. */
export interface GatewayOverrides {
  routeKey?: string;
  rawPath?: string;
  pathParameters?: Record<string, string>;
}

/**
 * An HTTP API request as API Gateway hands it to the Lambda (payload format 2.0): the route it
 * matched (`$default` for none), the path and the route's parameters percent-decoded (a subject
 * "a/b" sent as a%2Fb arrives as rawPath ".../a/b/...").
 */
export function httpApiEvent(
  method: string,
  pathWithQuery: string,
  options: {
    body?: string | undefined;
    headers?: Record<string, string>;
    matching?: GatewayMatching;
    overrides?: GatewayOverrides;
  } = {},
): APIGatewayProxyEventV2 {
  const [sentPath = "/", rawQueryString = ""] = pathWithQuery.split("?");
  const route = routeOf(method, sentPath, options.matching ?? "as-sent");
  const rawPath = options.overrides?.rawPath ?? decodedLeniently(sentPath);
  const routeKey = options.overrides?.routeKey ?? (route ? `${method} ${route.path}` : "$default");
  const pathParameters = options.overrides?.pathParameters ?? route?.pathParameters;
  const headers = { host: "abc123.execute-api.us-east-1.amazonaws.com", ...options.headers };
  const queryStringParameters = rawQueryString
    ? Object.fromEntries(new URLSearchParams(rawQueryString))
    : undefined;
  return {
    version: "2.0",
    routeKey,
    rawPath,
    ...(pathParameters ? { pathParameters } : {}),
    rawQueryString,
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    requestContext: {
      accountId: "123456789012",
      apiId: "abc123",
      domainName: headers.host,
      domainPrefix: "abc123",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "test" },
      requestId: randomUUID(),
      routeKey,
      stage: "$default",
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    isBase64Encoded: false,
    ...(options.body === undefined ? {} : { body: options.body }),
  };
}

/** The SQS event a FIFO event source mapping delivers for messages received from the queue. */
export function sqsEvent(messages: Message[], queueArn: string): SQSEvent {
  return {
    Records: messages.map((message) => ({
      messageId: message.MessageId ?? randomUUID(),
      receiptHandle: message.ReceiptHandle ?? "",
      body: message.Body ?? "",
      attributes: {
        ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? "1",
        SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: "123456789012",
        ApproximateFirstReceiveTimestamp: String(Date.now()),
        MessageGroupId: message.Attributes?.MessageGroupId ?? "group",
        MessageDeduplicationId: message.Attributes?.MessageDeduplicationId ?? "dedup",
        SequenceNumber: message.Attributes?.SequenceNumber ?? "1",
      },
      messageAttributes: {},
      md5OfBody: message.MD5OfBody ?? "",
      eventSource: "aws:sqs",
      eventSourceARN: queueArn,
      awsRegion: "us-east-1",
    })),
  };
}

/** The DynamoDB Streams event Lambda delivers for records read from the table's stream. */
export function streamEvent(records: StreamRecord[], streamArn: string): DynamoDBStreamEvent {
  return {
    Records: records.map(
      (record): DynamoDBRecord => ({
        eventID: record.eventID ?? randomUUID(),
        eventName: record.eventName as DynamoDBRecord["eventName"],
        eventVersion: "1.1",
        eventSource: "aws:dynamodb",
        awsRegion: "us-east-1",
        eventSourceARN: streamArn,
        dynamodb: {
          Keys: record.dynamodb?.Keys as NonNullable<DynamoDBRecord["dynamodb"]>["Keys"],
          SequenceNumber: record.dynamodb?.SequenceNumber ?? "0",
          SizeBytes: record.dynamodb?.SizeBytes ?? 0,
          StreamViewType: "KEYS_ONLY",
          ApproximateCreationDateTime: Math.floor(
            (record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? Date.now()) / 1000,
          ),
        },
      }),
    ),
  };
}
