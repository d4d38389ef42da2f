import { zoneLine, type CheckResult, type DoctorReport } from '../src/core/doctor.js';
import type { Services } from '../src/services/index.js';

export const DOCTOR_USAGE =
  '       agentpost doctor [domain ...] [--address ip,...] [--json]   check DNS, TLS and ports of mailDomain and every verified domain (or the domains named); exit 0 only when nothing fails';

/** Flags only `doctor` takes; removed from the flags before the settings read theirs. */
export const DOCTOR_FLAGS = ['address', 'json'] as const;

type Out = (text: string, code: number) => number;

/**
 * `agentpost doctor`: one line per check, `ok`, `warn` or `fail`, with the record to publish
 * or the step to take under each one that is not ok. Exit code 0 only when nothing fails.
 */
export const doctorCommand = async (args: string[], flags: Record<string, string | true>, services: Services, print: Out, fail: Out): Promise<number> => {
  if (flags.address === true) return fail('--address needs a value: one or more IP addresses, comma-separated', 2);
  const addresses =
    typeof flags.address === 'string'
      ? flags.address
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
      : undefined;
  const report = await services.doctor.run({ domains: args, addresses });
  if (flags.json === true) return print(JSON.stringify(report, null, 2), report.ok ? 0 : 1);
  return print(render(report), report.ok ? 0 : 1);
};

const render = (report: DoctorReport): string => {
  const width = Math.max(...report.checks.map((check) => check.check.length));
  const subjectWidth = Math.min(40, Math.max(...report.checks.map((check) => check.subject.length)));
  const lines = report.checks.flatMap((check) => [
    `${check.status.padEnd(4)}  ${check.check.padEnd(width)}  ${check.subject.padEnd(subjectWidth)}  ${check.detail}`,
    ...advice(check).map((line) => `${' '.repeat(6)}${line}`),
  ]);
  const counts = (['ok', 'warn', 'fail'] as const).map((status) => `${report.checks.filter((check) => check.status === status).length} ${status}`);
  return [...lines, '', `${counts.join(', ')}: ${report.ok ? 'nothing fails' : 'fix the failing checks'}`].join('\n');
};

const advice = (check: CheckResult): string[] => [
  ...(check.publish ? [`publish: ${zoneLine(check.publish)}`] : []),
  ...(check.fix ? [`fix: ${check.fix}`] : []),
];
