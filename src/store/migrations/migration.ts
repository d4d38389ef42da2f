/** One schema step: applied once, in version order (src/store/db.ts). */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
