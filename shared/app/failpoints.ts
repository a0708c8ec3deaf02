/**
 * Failpoints for fault tests (CONTRACT §5): MEMGATE_FAILPOINTS="after-artifact-write=crash,generate=timeout".
 * `crash` ends the process at once, with no cleanup, as a killed Lambda would; `timeout` makes the
 * step hang until its deadline; `error` makes it throw.
 */
export const FAILPOINT_NAMES = [
  "after-append",
  "generate",
  "after-artifact-write",
  "before-publish",
  "after-publish",
] as const;
export type FailpointName = (typeof FAILPOINT_NAMES)[number];
export type FailpointAction = "crash" | "timeout" | "error";

export class FailpointError extends Error {
  constructor(readonly failpoint: FailpointName) {
    super(`failpoint ${failpoint} fired`);
    this.name = "FailpointError";
  }
}

export interface Failpoints {
  action(name: FailpointName): FailpointAction | undefined;
  /** Fires the failpoint if one is set here: crashes, or throws; `timeout` is left to the step. */
  hit(name: FailpointName): void;
}

export function parseFailpoints(spec: string | undefined): Failpoints {
  const actions = new Map<FailpointName, FailpointAction>();
  for (const part of (spec ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, action] = part.split("=").map((p) => p.trim());
    if (!FAILPOINT_NAMES.includes(name as FailpointName))
      throw new Error(
        `MEMGATE_FAILPOINTS names unknown failpoint "${name}"; known: ${FAILPOINT_NAMES.join(", ")}`,
      );
    if (action !== "crash" && action !== "timeout" && action !== "error")
      throw new Error(`MEMGATE_FAILPOINTS: "${part}" must end in =crash, =timeout or =error`);
    actions.set(name as FailpointName, action);
  }
  return {
    action: (name) => actions.get(name),
    hit(name) {
      const action = actions.get(name);
      if (action === "crash") process.kill(process.pid, "SIGKILL");
      if (action === "error") throw new FailpointError(name);
    },
  };
}

export const NO_FAILPOINTS: Failpoints = parseFailpoints(undefined);
