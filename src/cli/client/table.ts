/** Plain-text tables for terminals: aligned columns, two spaces apart, no trailing blanks. */

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
  /** @default "left" */
  align?: 'left' | 'right';
  /** Longer cells are cut and end with "…". @default unlimited */
  maxWidth?: number;
}

const GAP = '  ';

export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => cell(column.value(row), column.maxWidth)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => (line[i] ?? '').length)));
  const render = (line: readonly string[]): string =>
    line
      .map((text, i) => {
        const width = widths[i] ?? 0;
        if (columns[i]?.align === 'right') return text.padStart(width);
        return i === line.length - 1 ? text : text.padEnd(width);
      })
      .join(GAP)
      .trimEnd();
  return [render(columns.map((column) => column.header)), ...cells.map(render)].join('\n');
}

function cell(value: string | number | boolean | null | undefined, maxWidth: number | undefined): string {
  const text = value === null || value === undefined ? '-' : String(value).replace(/\s*\n\s*/g, ' ');
  if (maxWidth === undefined || text.length <= maxWidth) return text;
  return `${text.slice(0, Math.max(0, maxWidth - 1))}…`;
}
