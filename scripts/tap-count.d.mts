export interface TapCounts {
  passed: number;
  failed: number;
  skipped: number;
  reasons: string[];
}
export declare const countTap: (tap: string, exitCode: number) => TapCounts;
export declare const closingLine: (counts: Pick<TapCounts, 'passed' | 'failed' | 'skipped'>) => string;
