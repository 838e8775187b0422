/** Types of node-bundle.mjs (plain JavaScript: bin/edgeclaw.mjs and scripts/run.mjs load it without tsx). */
export declare function bundledEntry(
  entry: string,
  root?: string,
): Promise<{ path: string; built: boolean }>;
export declare function runEntry(entry: string): Promise<void>;
