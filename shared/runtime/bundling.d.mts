/** Types of shared/runtime/bundling.mjs (plain JavaScript: the build scripts load it under Node 20). */
export declare const BUNDLE_TARGETS: Readonly<{ cli: "node20"; lambda: "node24" }>;
export declare const TEXT_LOADERS: Readonly<Record<".md", "text">>;
export declare const REQUIRE_BANNER: string;
export declare const CLI_EXTERNAL: readonly string[];
interface BundleOptions {
  readonly bundle: true;
  readonly platform: "node";
  readonly format: "esm";
  readonly loader: Readonly<Record<string, "text">>;
  readonly banner: { js: string };
  readonly logLevel: "error";
  readonly target: string;
  readonly external: string[];
}
export declare const CLI_BUNDLE: BundleOptions & { readonly splitting: true };
export declare const LAMBDA_BUNDLE: BundleOptions & {
  readonly minify: true;
  readonly sourcemap: false;
  readonly mainFields: string[];
};
