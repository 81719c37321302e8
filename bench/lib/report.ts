/**
 * The figures of one `npm run bench`: each one measured for the service
 * and for its baseline in the same run, on the same machine, a few times;
 * printed as one table (median [min-max]) and written as JSON.
 */
import { spread, type Spread } from "./stats.ts";

/** A goal of issue 11 a figure is checked against. */
export interface Target {
  /** The ratio service / baseline must be at least (rates) or at most (times) this. */
  readonly ratio?: number;
  /** The service's own value must be at most this (memory, MiB). */
  readonly atMost?: number;
}

export interface Figure {
  readonly id: string;
  readonly label: string;
  readonly unit: string;
  /** Rates: higher is better; times and memory: lower is better. */
  readonly better: "higher" | "lower";
  readonly baselineLabel: string;
  readonly service: number[];
  readonly baseline: number[];
  readonly target?: Target;
  /** Failed requests and other things the reader must know about these runs. */
  readonly notes: string[];
}

export interface FigureReport {
  readonly id: string;
  readonly label: string;
  readonly unit: string;
  readonly better: "higher" | "lower";
  readonly baselineLabel: string;
  readonly service: Spread;
  readonly baseline: Spread;
  /** Per run, service / baseline (run i with run i). */
  readonly ratio: Spread;
  readonly target?: Target;
  /** Whether the median meets the target (undefined: no target). */
  readonly met?: boolean;
  readonly notes: string[];
}

export class Figures {
  readonly #figures = new Map<string, Figure>();

  /** The figure `id`, created on first use. */
  figure(id: string, init: Omit<Figure, "id" | "service" | "baseline" | "notes">): Figure {
    let figure = this.#figures.get(id);
    if (!figure) {
      figure = { id, ...init, service: [], baseline: [], notes: [] };
      this.#figures.set(id, figure);
    }
    return figure;
  }

  add(id: string, init: Omit<Figure, "id" | "service" | "baseline" | "notes">, service: number, baseline: number): void {
    const figure = this.figure(id, init);
    figure.service.push(service);
    figure.baseline.push(baseline);
  }

  note(id: string, note: string): void {
    const figure = this.#figures.get(id);
    if (figure && !figure.notes.includes(note)) figure.notes.push(note);
  }

  reports(): FigureReport[] {
    return [...this.#figures.values()].map((figure) => {
      const ratios = figure.service.map((value, i) => value / (figure.baseline[i] ?? Number.NaN));
      const ratio = spread(ratios);
      const service = spread(figure.service);
      let met: boolean | undefined;
      if (figure.target?.ratio !== undefined) {
        met = figure.better === "higher" ? ratio.median >= figure.target.ratio : ratio.median <= figure.target.ratio;
      }
      if (figure.target?.atMost !== undefined) met = (met ?? true) && service.median <= figure.target.atMost;
      return {
        id: figure.id,
        label: figure.label,
        unit: figure.unit,
        better: figure.better,
        baselineLabel: figure.baselineLabel,
        service,
        baseline: spread(figure.baseline),
        ratio,
        ...(figure.target ? { target: figure.target } : {}),
        ...(met !== undefined ? { met } : {}),
        notes: figure.notes,
      };
    });
  }
}

function amount(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function cell(s: Spread): string {
  if (s.runs.length <= 1) return amount(s.median);
  return `${amount(s.median)} [${amount(s.min)}-${amount(s.max)}]`;
}

function ratioCell(s: Spread): string {
  if (!Number.isFinite(s.median)) return "n/a";
  const one = (value: number) => value.toFixed(2);
  return s.runs.length <= 1 ? `${one(s.median)}x` : `${one(s.median)}x [${one(s.min)}-${one(s.max)}]`;
}

function targetCell(report: FigureReport): string {
  const parts: string[] = [];
  if (report.target?.ratio !== undefined) parts.push(`${report.better === "higher" ? ">=" : "<="} ${report.target.ratio}x`);
  if (report.target?.atMost !== undefined) parts.push(`<= ${report.target.atMost} ${report.unit}`);
  if (parts.length === 0) return "";
  return `${parts.join(", ")} ${report.met ? "met" : "MISSED"}`;
}

/** One table: figure, service, baseline (and what it is), ratio, target. */
export function formatTable(reports: readonly FigureReport[]): string {
  const header = ["figure", "service", "baseline", "ratio", "target", "baseline is"];
  const rows = reports.map((report) => [
    `${report.label} (${report.unit})`,
    cell(report.service),
    cell(report.baseline),
    ratioCell(report.ratio),
    targetCell(report),
    report.baselineLabel,
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((text, i) => (i === 0 || i === cells.length - 1 ? text.padEnd(widths[i] ?? 0) : text.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const out = [line(header), widths.map((width) => "-".repeat(width)).join("  ")];
  for (const row of rows) out.push(line(row));
  const notes = reports.flatMap((report) => report.notes.map((note) => `  ${report.label}: ${note}`));
  if (notes.length > 0) out.push("", "notes:", ...notes);
  return out.join("\n");
}
