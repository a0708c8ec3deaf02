/** Markdown files imported as their text (esbuild's text loader; the tests' vitest plugin). */
declare module "*.md" {
  const text: string;
  export default text;
}
