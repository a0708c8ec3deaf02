import type { z } from "zod";

/**
 * zod's issues as the text memgate shows: every entry point (command line, HTTP, MCP, the Lambdas'
 * cold start, the CDK app's tenants) names the field at fault the same way, on one line. zod's own
 * `z.prettifyError` writes one issue per two lines with arrows; these keep its content (each
 * issue's path and message) in the shapes the contract asks for.
 */

/** How a path is written: `events[3].assertions[0]` (brackets) or `assertions.0.value` (dots). */
export type PathStyle = "brackets" | "dots";

/**
 * A zod issue path as a field name: `events[3].assertions[0].value` in the brackets style (after
 * `lead`, written before a leading key, as `.` after a prefix), `assertions.0.value` in the dots
 * style.
 */
export function fieldOf(path: readonly PropertyKey[], style: PathStyle = "brackets", lead = ""): string {
  if (style === "dots") return path.map(String).join(".");
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? lead : "."}${String(part)}`,
    )
    .join("");
}

/** The first issue (the one a request is refused for): its field, or `fallback` at the root. */
export function firstIssue(
  error: z.ZodError,
  fallback: string,
  options: { style?: PathStyle; lead?: string } = {},
): { field: string; message: string } {
  const issue = error.issues[0];
  return {
    field: fieldOf(issue?.path ?? [], options.style, options.lead) || fallback,
    message: issue?.message ?? "invalid",
  };
}

/**
 * Every issue on one line: `field: message; field: message` (files on the command line), or in
 * another layout (`each`, `separator`) where a message must read otherwise.
 */
export function describeIssues(
  error: z.ZodError,
  options: {
    style?: PathStyle;
    each?: (field: string, message: string) => string;
    separator?: string;
  } = {},
): string {
  const each = options.each ?? ((field: string, message: string) => `${field}: ${message}`);
  return error.issues
    .map((issue) => each(fieldOf(issue.path, options.style ?? "dots") || "(value)", issue.message))
    .join(options.separator ?? "; ");
}
