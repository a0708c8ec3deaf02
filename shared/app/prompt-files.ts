import answerV1 from "../../prompts/answer-v1.md";
import consolidateV1 from "../../prompts/consolidate-v1.md";
import consolidateV2 from "../../prompts/consolidate-v2.md";
import consolidateV3 from "../../prompts/consolidate-v3.md";
import consolidateV4 from "../../prompts/consolidate-v4.md";
import consolidateV5 from "../../prompts/consolidate-v5.md";
import consolidateV6 from "../../prompts/consolidate-v6.md";
import consolidateV7 from "../../prompts/consolidate-v7.md";
import consolidateV8 from "../../prompts/consolidate-v8.md";
import gradeV1 from "../../prompts/grade-v1.md";
import judgeV1 from "../../prompts/judge-v1.md";
import segmentV1 from "../../prompts/segment-v1.md";
import segmentV2 from "../../prompts/segment-v2.md";
import summaryV1 from "../../prompts/summary-v1.md";
import summaryV2 from "../../prompts/summary-v2.md";

/**
 * The versioned prompt files (`prompts/<version>.md`) by version, imported as text: esbuild's text
 * loader puts them inside every bundle (the CLI's, each Lambda's, the CDK stack's), and the tests
 * load them the same way (vitest.config.ts), so nothing reads a prompt from disk at run time and
 * each hashes exactly as its file does. A new prompt file is added here; a test checks that this
 * list and the folder agree.
 */
export const PROMPT_FILES: Readonly<Record<string, string>> = {
  "consolidate-v1": consolidateV1,
  "consolidate-v2": consolidateV2,
  "consolidate-v3": consolidateV3,
  "consolidate-v4": consolidateV4,
  "consolidate-v5": consolidateV5,
  "consolidate-v6": consolidateV6,
  "consolidate-v7": consolidateV7,
  "consolidate-v8": consolidateV8,
  "segment-v1": segmentV1,
  "segment-v2": segmentV2,
  "summary-v1": summaryV1,
  "summary-v2": summaryV2,
  "judge-v1": judgeV1,
  "answer-v1": answerV1,
  "grade-v1": gradeV1,
};
