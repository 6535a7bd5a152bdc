/** See build-state.mjs. */
export declare const ROOT: string;
export declare const OUT_DIR: string;
export declare function stampInputs(inputs: string[], root?: string): void;
export declare function staleReason(root?: string): string | null;
export declare function requireBuild(who: string): void;
