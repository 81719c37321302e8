import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { CampaignEngagementBucket, CampaignLinkResult } from "@gen/mail/v1/campaigns_pb.js";
import type { CampaignRevenue } from "@gen/mail/v1/reports_pb.js";
import { StatsInterval } from "@gen/mail/v1/stats_pb.js";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatNumber } from "../../app/format.tsx";
import { Figure, Legend } from "../../components/charts/Figure.tsx";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** At most this many buckets are drawn (the most recent ones): a week by the hour, or a quarter by the day. */
const MAX_BUCKETS = 168;

/** The series of the engagement chart; each has its colour class in screen.css (`chart-<key>`). */
const SERIES = [
  { key: "opens", label: "Opens" },
  { key: "clicks", label: "Verified clicks" },
] as const;

interface Bucket {
  readonly at: number;
  readonly label: string;
  readonly opens: number;
  readonly clicks: number;
}

/** Every bucket from the first to the last with activity, the empty ones as zero (the answer lists only buckets with any). */
function filled(timeline: readonly CampaignEngagementBucket[], interval: StatsInterval): Bucket[] {
  const step = interval === StatsInterval.DAY ? DAY_MS : HOUR_MS;
  const format = new Intl.DateTimeFormat(undefined, interval === StatsInterval.DAY ? { month: "short", day: "numeric" } : { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  const known = new Map(timeline.map((b) => [b.start ? timestampDate(b.start).getTime() : 0, b]));
  const times = [...known.keys()];
  if (times.length === 0) return [];
  const last = Math.max(...times);
  const first = Math.max(Math.min(...times), last - (MAX_BUCKETS - 1) * step);
  const out: Bucket[] = [];
  for (let at = first; at <= last; at += step) {
    const bucket = known.get(at);
    out.push({ at, label: format.format(new Date(at)), opens: bucket?.opens ?? 0, clicks: bucket?.clicks ?? 0 });
  }
  return out;
}

/** Opens and verified clicks over time, from the first copy handed over. */
export function EngagementChart({ timeline, interval }: { timeline: readonly CampaignEngagementBucket[]; interval: StatsInterval }) {
  const rows = filled(timeline, interval);
  const unit = interval === StatsInterval.DAY ? "day" : "hour";
  if (rows.length === 0) return <p className="hint">No opens or clicks yet.</p>;
  return (
    <Figure
      level={3}
      title="Opens and clicks over time"
      explanation={`Per ${unit}, in your time zone. Machine opens and clicks that look automated are left out.`}
      legend={<Legend items={SERIES} />}
      table={
        <table className="list-table numbers-table">
          <caption className="visually-hidden">Opens and verified clicks per {unit}</caption>
          <thead>
            <tr>
              <th scope="col">{unit === "day" ? "Day" : "Hour"}</th>
              <th scope="col">Opens</th>
              <th scope="col">Verified clicks</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.at}>
                <th scope="row">{row.label}</th>
                <td className="number">{formatNumber(row.opens)}</td>
                <td className="number">{formatNumber(row.clicks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={rows} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid className="chart-grid" vertical={false} />
          <XAxis dataKey="label" className="chart-axis" minTickGap={16} tickLine={false} />
          <YAxis className="chart-axis" allowDecimals={false} width={40} tickLine={false} />
          <Tooltip cursor={false} isAnimationActive={false} />
          {SERIES.map((s) => (
            <Bar key={s.key} dataKey={s.key} name={s.label} className={`chart-${s.key}`} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </Figure>
  );
}

/** The tracked links by verified clicks, as a chart and a table. */
export function LinkClicksChart({ links }: { links: readonly CampaignLinkResult[] }) {
  if (links.length === 0) return <p className="hint">This campaign has no tracked links.</p>;
  const rows = links.map((link) => ({ url: link.url, clicks: link.clicks }));
  return (
    <Figure
      level={3}
      title="Clicks per link"
      explanation="Verified clicks on each link of the campaign, most first. Clicks that look automated (link scanners, prefetch) are counted apart."
      table={
        <table className="list-table numbers-table">
          <caption className="visually-hidden">Clicks per link</caption>
          <thead>
            <tr>
              <th scope="col">Link</th>
              <th scope="col">Verified clicks</th>
              <th scope="col">Recipients</th>
              <th scope="col">Automated</th>
            </tr>
          </thead>
          <tbody>
            {links.map((link) => (
              <tr key={link.linkId}>
                <th scope="row" className="break">
                  {link.url}
                </th>
                <td className="number">{formatNumber(link.clicks)}</td>
                <td className="number">{formatNumber(link.clickers)}</td>
                <td className="number">{formatNumber(link.suspectClicks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      <ResponsiveContainer width="100%" height={Math.max(120, 36 * rows.length)}>
        <BarChart data={rows} layout="vertical" accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid className="chart-grid" horizontal={false} />
          <XAxis type="number" className="chart-axis" allowDecimals={false} tickLine={false} />
          <YAxis type="category" dataKey="url" className="chart-axis" width={140} tickLine={false} tickFormatter={shortUrl} />
          <Tooltip cursor={false} isAnimationActive={false} />
          <Bar dataKey="clicks" name="Verified clicks" className="chart-clicks" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </Figure>
  );
}

/** A link as an axis label: its host and path, shortened. */
function shortUrl(url: string): string {
  let text = url;
  try {
    const parsed = new URL(url);
    text = `${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    // Not a URL: shown as stored.
  }
  return text.length > 22 ? `${text.slice(0, 21)}…` : text;
}

/** The revenue attributed to the campaign, one row per currency (amounts never mix currencies). */
export function RevenueTable({ revenue }: { revenue: readonly CampaignRevenue[] }) {
  return (
    <section aria-labelledby="revenue-title">
      <h3 id="revenue-title">Revenue</h3>
      <p className="hint">Conversions whose last verified click before them was on a link of this campaign.</p>
      {revenue.length === 0 ? (
        <p className="hint">No conversion attributed yet.</p>
      ) : (
        <div className="list-scroll" role="region" aria-label="Revenue, table" tabIndex={0}>
          <table className="list-table numbers-table">
            <caption className="visually-hidden">Revenue attributed to the campaign</caption>
            <thead>
              <tr>
                <th scope="col">Currency</th>
                <th scope="col">Conversions</th>
                <th scope="col">Gross</th>
                <th scope="col">Refunded</th>
                <th scope="col">Net</th>
              </tr>
            </thead>
            <tbody>
              {revenue.map((row) => (
                <tr key={row.currency}>
                  <th scope="row">{row.currency}</th>
                  <td className="number">{formatNumber(row.conversions)}</td>
                  <td className="number">{row.gross}</td>
                  <td className="number">{row.refunded}</td>
                  <td className="number">{row.net}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
