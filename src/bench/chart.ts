// A self-contained SVG grouped bar chart for the comparison report: per method, context
// recall@k and EM (both in percent), one panel per language group. No scripts, no fonts to fetch.
import type { ComparisonRow, LangGroup } from './compare';

interface ChartSeries {
  name: string;
  color: string;
  value: (row: ComparisonRow) => number | null;
}

const DEFAULT_SERIES: ChartSeries[] = [
  { name: 'recall@k (%)', color: '#4e79a7', value: (r) => (r.report.overall.recall === null ? null : 100 * r.report.overall.recall) },
  { name: 'coverage@k (%)', color: '#a0cbe8', value: (r) => (r.report.overall.coverage === null ? null : 100 * r.report.overall.coverage) },
  { name: 'EM (%)', color: '#f28e2b', value: (r) => r.report.overall.em },
];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const GROUP_TITLE: Record<LangGroup, string> = { python: 'Python', java: 'Java', all: 'All cases' };

/** One SVG with a panel per language group; bars are 0-100. */
export function comparisonChartSvg(rows: readonly ComparisonRow[], title: string, series: readonly ChartSeries[] = DEFAULT_SERIES): string {
  const groups = (['python', 'java', 'all'] as const).filter((g) => rows.some((r) => r.group === g));
  const methods = [...new Set(rows.map((r) => r.method))];
  const barW = 14;
  const gap = 18;
  const slot = series.length * barW + gap;
  const plotH = 200;
  const left = 44;
  const panelW = Math.max(320, left + methods.length * slot + 20);
  const panelH = plotH + 110;
  const width = panelW;
  const height = 60 + groups.length * panelH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`);
  series.forEach((s, i) => {
    const x = left + i * 130;
    out.push(`<rect x="${x}" y="32" width="10" height="10" fill="${s.color}"/><text x="${x + 14}" y="41">${esc(s.name)}</text>`);
  });
  groups.forEach((g, gi) => {
    const top = 60 + gi * panelH;
    const base = top + 24 + plotH;
    out.push(`<text x="${left}" y="${top + 14}" font-size="13" font-weight="bold">${GROUP_TITLE[g]}</text>`);
    for (const tick of [0, 25, 50, 75, 100]) {
      const y = base - (tick / 100) * plotH;
      out.push(
        `<line x1="${left}" x2="${panelW - 10}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${left - 6}" y="${y + 4}" ` +
          `text-anchor="end" fill="#555">${tick}</text>`,
      );
    }
    methods.forEach((m, mi) => {
      const row = rows.find((r) => r.group === g && r.method === m);
      const x0 = left + 10 + mi * slot;
      series.forEach((s, si) => {
        const v = row ? s.value(row) : null;
        if (v === null) return;
        const h = (Math.max(0, Math.min(100, v)) / 100) * plotH;
        const x = x0 + si * barW;
        out.push(
          `<rect x="${x}" y="${(base - h).toFixed(1)}" width="${barW - 2}" height="${h.toFixed(1)}" ` +
            `fill="${s.color}"><title>${esc(`${m} ${s.name}: ${v.toFixed(1)}`)}</title></rect>`,
        );
      });
      const cx = x0 + (series.length * barW) / 2;
      out.push(`<text x="${cx}" y="${base + 12}" text-anchor="end" transform="rotate(-35 ${cx} ${base + 12})">${esc(m)}</text>`);
    });
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
