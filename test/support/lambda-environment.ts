// The environment a Lambda's runtime reads at its cold start, over the stores the local engines
// hold (DynamoDB Local for the table, moto for S3, SQS and Secrets Manager).

interface LocalStores {
  store: { tableName: string };
  bucket: string;
  queueUrl: string;
}

export function lambdaEnvironment(
  aws: LocalStores,
  endpoints: { dynamoEndpoint: string; motoEndpoint: string },
  logLevel: "ERROR" | "INFO" = "ERROR",
): Record<string, string> {
  return {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: endpoints.motoEndpoint,
    AWS_ENDPOINT_URL_SQS: endpoints.motoEndpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.motoEndpoint,
    MEMGATE_TENANT: "acme",
    MEMGATE_TABLE: aws.store.tableName,
    MEMGATE_BUCKET: aws.bucket,
    MEMGATE_QUEUE_URL: aws.queueUrl,
    POWERTOOLS_TRACE_ENABLED: "false",
    POWERTOOLS_LOG_LEVEL: logLevel,
  };
}
