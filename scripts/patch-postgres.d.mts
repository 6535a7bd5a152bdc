/** See patch-postgres.mjs. */
export declare const PATCH_MARK: string;
export declare function driverFiles(): string[];
export declare function patch(): string[];
export declare function mendText(text: string, file: string): string;
