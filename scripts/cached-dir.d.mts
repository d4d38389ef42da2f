export declare const cachedDir: (dir: string, make: (making: string) => Promise<void>) => Promise<string>;
export declare const pruneUnused: (parent: string, unusedMs: number, keep?: string) => void;
