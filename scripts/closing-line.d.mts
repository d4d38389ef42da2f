export declare const closingLine: (counts: { passed: number; failed: number; skipped: number }) => string;
