import { html, type Html } from './html.js';

/** Badge colours by meaning; anything unknown is neutral. */
const TONE: Record<string, string> = {
  delivered: 'good',
  active: 'good',
  sent: 'good',
  enabled: 'good',
  standard: 'good',
  reviewed: 'good',
  succeeded: 'good',
  verified: 'good',
  yes: 'good',
  queued: 'info',
  pending: 'info',
  approving: 'info',
  probation: 'info',
  applied: 'good',
  confirming: 'info',
  underpaid: 'warn',
  canceled: 'muted',
  none: 'muted',
  deferred: 'warn',
  retrying: 'warn',
  unresolved: 'warn',
  // The deployment checks (the Health page).
  ok: 'good',
  warn: 'warn',
  fail: 'bad',
  bounced: 'bad',
  failed: 'bad',
  rejected: 'bad',
  revoked: 'bad',
  suspended: 'bad',
  paused: 'bad',
  failing: 'bad',
  no: 'bad',
  expired: 'muted',
  suppressed: 'muted',
  off: 'muted',
  unchecked: 'muted',
};

export const badge = (status: string): Html => html`<span class="badge ${TONE[status] ?? 'muted'}">${status}</span>`;

/** A time in the service zone, with the exact instant in the datetime attribute. */
export const timeOf = (at: string | number | null | undefined, timeZone: string): Html => {
  if (at === null || at === undefined) return html`<span class="muted">—</span>`;
  const date = new Date(at);
  const text = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(date)
    .replace(',', '');
  return html`<time datetime="${date.toISOString()}">${text}</time>`;
};

export const bytes = (size: number): string =>
  size < 1024 ? `${size} B` : size < 1024 * 1024 ? `${(size / 1024).toFixed(1)} KB` : `${(size / 1024 / 1024).toFixed(1)} MB`;

/** Today's recipients against the daily limit, as a meter and in words. */
export const usageMeter = (used: number, limit: number): Html =>
  html`<span class="usage"><meter min="0" max="${Math.max(limit, 1)}" low="${Math.ceil(limit * 0.7)}" high="${Math.ceil(limit * 0.9)}" optimum="0" value="${used}">${used}/${limit}</meter> ${used} of ${limit} today</span>`;

const CHART_HEIGHT = 80;
const LABEL_SPACE = 14;
const BAR_WIDTH = 22;
const GAP = 6;

/**
 * Recipients per day against the daily limit: one bar a day, the limit as a dashed line, the
 * first and last dates under the bars. SVG with presentation attributes only: the page's CSP
 * allows no inline style.
 */
export const usageChart = (days: readonly { date: string; recipients: number }[], limit: number): Html => {
  const top = Math.max(limit, ...days.map((day) => day.recipients), 1);
  const width = days.length * (BAR_WIDTH + GAP) - GAP;
  const y = (value: number) => CHART_HEIGHT - Math.round((value / top) * (CHART_HEIGHT - 4));
  const bars = days.map((day, index) => {
    const over = day.recipients >= limit && limit > 0;
    return html`<rect x="${index * (BAR_WIDTH + GAP)}" y="${y(day.recipients)}" width="${BAR_WIDTH}" height="${CHART_HEIGHT - y(day.recipients)}" rx="2" class="${over ? 'bar over' : 'bar'}"><title>${day.date}: ${day.recipients} of ${limit}</title></rect>`;
  });
  const first = days[0]?.date ?? '';
  const last = days[days.length - 1]?.date ?? '';
  return html`<figure class="chart">
<svg viewBox="0 0 ${width} ${CHART_HEIGHT + LABEL_SPACE}" role="img" aria-label="Recipients per day for ${days.length} days against the daily limit of ${limit}">
<line x1="0" x2="${width}" y1="${CHART_HEIGHT}" y2="${CHART_HEIGHT}" class="base"/>
${bars}
<line x1="0" x2="${width}" y1="${y(limit)}" y2="${y(limit)}" class="limit"/>
<text x="0" y="${CHART_HEIGHT + LABEL_SPACE - 2}">${first}</text><text x="${width}" y="${CHART_HEIGHT + LABEL_SPACE - 2}" text-anchor="end">${last} (today)</text>
</svg>
<figcaption>Recipients per day, last ${days.length} days; the dashed line is the daily limit (${limit}).</figcaption>
</figure>`;
};

export const notice = (text: string | undefined, tone: 'good' | 'bad' = 'good'): Html =>
  text ? html`<p class="notice ${tone}" role="status">${text}</p>` : html``;

export const empty = (text: string): Html => html`<p class="muted">${text}</p>`;

/** A table that scrolls sideways on a phone rather than squeezing its columns. */
export const table = (headers: readonly string[], rows: readonly Html[]): Html =>
  html`<div class="scroll"><table><thead><tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;
