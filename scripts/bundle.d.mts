/** Types of scripts/bundle.mjs for the tests that build or locate the bundle. */
export declare function ensureBundle(): Promise<string>;
export declare function buildBundle(target?: string): Promise<string>;
