export interface TapCounts {
  passed: number;
  failed: number;
  skipped: number;
  reasons: string[];
}
export declare const countTap: (tap: string, exitCode: number) => TapCounts;
