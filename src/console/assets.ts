/** The console's one style sheet: readable on a phone and a laptop, no external fonts. */
export const CONSOLE_CSS = `
:root { --fg: #1d232b; --muted: #6a7380; --line: #dfe3e8; --bg: #f6f7f9; --card: #fff; --accent: #2458d3;
  --good: #17803d; --good-bg: #e3f4e8; --info: #1f5fbf; --info-bg: #e4edfb; --warn: #9a5b00; --warn-bg: #fdf0d9;
  --bad: #b42318; --bad-bg: #fde6e4; --muted-bg: #eef0f3; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; padding: .75rem 1rem; background: var(--card); border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; text-decoration: none; color: var(--fg); margin-right: auto; }
/* The menu wraps onto more lines rather than pushing the page wider than a phone. */
header.top nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; min-width: 0; }
header.top nav a { text-decoration: none; padding: .2rem 0; }
header.top nav a[aria-current="page"] { font-weight: 600; border-bottom: 2px solid var(--accent); }
main { max-width: 68rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1rem; margin: 0 0 1rem; }
.card > h2:first-child, .card > p:first-child { margin-top: 0; }
.grid > .card { margin: 0; }
.grid { margin: 0 0 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem; margin: 0 0 1rem; border-bottom: 1px solid var(--line); }
.tabs a { padding: .4rem .8rem; text-decoration: none; border-radius: 6px 6px 0 0; }
.tabs a[aria-current="page"] { background: var(--card); border: 1px solid var(--line); border-bottom-color: var(--card); margin-bottom: -1px; font-weight: 600; }
.scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 10px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .55rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
tr:last-child td { border-bottom: 0; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; white-space: nowrap; }
td code { overflow-wrap: anywhere; }
/* Long values (a DKIM key) wrap, but not into a sliver: on a phone the table scrolls instead. */
td.wide { min-width: 14rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: .05rem .55rem; border-radius: 999px; font-size: .8rem; font-weight: 600; white-space: nowrap; }
.badge.good { color: var(--good); background: var(--good-bg); }
.badge.info { color: var(--info); background: var(--info-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.badge.bad { color: var(--bad); background: var(--bad-bg); }
.badge.muted { color: var(--muted); background: var(--muted-bg); }
.muted { color: var(--muted); }
.notice { padding: .6rem .9rem; border-radius: 8px; }
.notice.good { background: var(--good-bg); color: var(--good); }
.notice.bad { background: var(--bad-bg); color: var(--bad); }
.notice.info { background: var(--info-bg); color: var(--info); }
h3 { font-size: 1rem; margin: 0 0 .5rem; }
a.button { display: inline-block; padding: .5rem 1rem; border-radius: 8px; background: var(--accent); color: #fff; text-decoration: none; }
.pay { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.pay dl.facts { flex: 1 1 16rem; min-width: 0; }
figure.qr { margin: 0; text-align: center; }
svg.qr { display: block; width: 12rem; max-width: 100%; height: auto; }
form.stack { display: grid; gap: .6rem; max-width: 32rem; }
form.inline { display: inline; margin: 0; }
form.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
label { display: grid; gap: .2rem; font-size: .9rem; color: var(--muted); }
input, textarea, select { font: inherit; padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 8px; background: #fff; color: var(--fg); width: 100%; }
textarea { min-height: 8rem; }
button { font: inherit; padding: .5rem 1rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { border-color: var(--bad); background: var(--bad); }
button.link { border: 0; background: none; color: var(--accent); padding: 0; }
pre.body { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1rem; margin: 0 0 1rem; font: .95rem/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; }
iframe.mail { display: block; width: 100%; min-height: 28rem; border: 1px solid var(--line); border-radius: 10px; background: #fff; margin: 0 0 1rem; }
.scroll { margin: 0 0 1rem; }
code.secret { display: block; padding: .75rem; background: var(--muted-bg); border-radius: 8px; overflow-wrap: anywhere; user-select: all; }
.usage { display: inline-flex; align-items: center; gap: .5rem; }
meter { width: 8rem; }
figure.chart { margin: 0; }
figure.chart svg { width: 100%; height: auto; max-height: 10rem; }
figure.chart .bar { fill: #7aa2ea; }
figure.chart .bar.over { fill: var(--bad); }
figure.chart .base { stroke: var(--line); stroke-width: 1; }
figure.chart .limit { stroke: var(--warn); stroke-width: 1; stroke-dasharray: 4 3; }
figure.chart text { fill: var(--muted); font-size: 9px; }
figcaption { font-size: .85rem; color: var(--muted); }
@media (max-width: 36rem) { main { padding: .75rem; } h1 { font-size: 1.3rem; } th, td { padding: .45rem .5rem; } }
`;

/** The console's icon: a white envelope on the accent colour, legible at 16 pixels. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2458d3"/><rect x="6" y="9" width="20" height="14" rx="2" fill="#fff"/><path d="M7 10.5l9 7 9-7" fill="none" stroke="#2458d3" stroke-width="2.2" stroke-linejoin="round"/></svg>`;
