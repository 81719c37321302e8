import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { DomainsService } from "@gen/mail/v1/domains_pb.js";
import { type StatsCounts, StatsInterval, type StatsLeader, StatsService } from "@gen/mail/v1/stats_pb.js";
import { type ReactNode, useId } from "react";
import { Link, useSearchParams } from "react-router";
import { Bar, BarChart, CartesianGrid, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { errorMessage } from "../../app/errors.ts";
import { formatNumber } from "../../app/format.tsx";
import { Figure, Legend } from "../../components/charts/Figure.tsx";
import { Page } from "../../components/Page.tsx";
import { useCredits } from "../credits/balance.tsx";
import { STATUS } from "../domains/status.ts";
import { BOUNCE_THRESHOLDS, COMPLAINT_THRESHOLDS, type Threshold } from "./thresholds.ts";

const DAY_MS = 86_400_000;
/** The ranges offered, in days; 30 by default. */
const RANGES = [7, 30, 90] as const;

/** The outcomes stacked in the volume chart, bottom up; each has its colour class in screen.css (`chart-<name>`). */
const STACKED = [
  { key: "delivered", label: "Delivered" },
  { key: "bounced", label: "Bounced" },
  { key: "complained", label: "Complained" },
  { key: "rejected", label: "Rejected" },
  { key: "failed", label: "Failed" },
  { key: "suppressed", label: "Suppressed" },
] as const;

/** Every count of a bucket, in the table's order. */
const COUNTS = [
  { key: "accepted", label: "Accepted" },
  { key: "sent", label: "Sent" },
  ...STACKED,
  { key: "deferred", label: "Deferred" },
] as const;

type CountKey = (typeof COUNTS)[number]["key"];

const DAY_LABEL = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });

function percent(rate: number | undefined, digits = 2): string {
  return rate === undefined ? "—" : `${formatNumber(rate * 100, { maximumFractionDigits: digits, minimumFractionDigits: 0 })} %`;
}

/** The range's first UTC day: the same value all day long, so the query's key stays put between renders. */
function sinceFor(days: number): Date {
  return new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);
}

interface DayRow {
  readonly day: string;
  readonly counts: StatsCounts;
}

/**
 * The overview, the screen's first page (every member): the company's mail
 * over the last 7, 30 or 90 days (/admin/overview?days=), from the
 * statistics (StatsService): volume by outcome, the bounce and complaint
 * rates against the limits mailbox providers publish, the busiest and most
 * bouncing tags and templates, the credit balance, the sending domains.
 * Each chart has a table of the same numbers.
 */
export default function OverviewPage() {
  const [params] = useSearchParams();
  const asked = Number(params.get("days"));
  const days = (RANGES as readonly number[]).includes(asked) ? asked : 30;
  const since = timestampFromDate(sinceFor(days));
  const stats = useQuery(StatsService.method.getStats, { since, interval: StatsInterval.DAY }, { staleTime: 60_000 });
  const leaders = useQuery(StatsService.method.getStatsLeaders, { since, limit: 5 }, { staleTime: 60_000 });
  const rows: DayRow[] = (stats.data?.buckets ?? []).map((bucket) => ({
    day: bucket.start ? DAY_LABEL.format(timestampDate(bucket.start)) : "",
    counts: bucket.counts ?? ({} as StatsCounts),
  }));

  return (
    <Page
      title="Overview"
      actions={
        <nav aria-label="Range" className="range-switch">
          {RANGES.map((range) => (
            <Link key={range} to={`?days=${range}`} aria-current={range === days ? "page" : undefined} className="button">
              {range} days
            </Link>
          ))}
        </nav>
      }
    >
      <div className="overview-panels">
        <Totals totals={stats.data?.totals} days={days} failed={stats.error ? errorMessage(stats.error) : undefined} />
        <CreditsPanel />
        <DomainsPanel />
      </div>
      {stats.error ? null : !stats.data ? (
        <p role="status">Loading the statistics…</p>
      ) : (
        <>
          <VolumeChart rows={rows} days={days} />
          <div className="overview-rates">
            <RateChart
              title="Bounce rate"
              rows={rows}
              rate={(counts) => counts.bounceRate}
              thresholds={BOUNCE_THRESHOLDS}
              className="chart-rate-bounce"
              explanation="Bounces over the messages handed to the email service that day."
            />
            <RateChart
              title="Complaint rate"
              rows={rows}
              rate={(counts) => counts.complaintRate}
              thresholds={COMPLAINT_THRESHOLDS}
              className="chart-rate-complaint"
              explanation="Spam reports over the messages handed to the email service that day."
            />
          </div>
        </>
      )}
      <h2>Tags and templates</h2>
      {leaders.error ? (
        <p className="error">The tags and templates could not be read: {errorMessage(leaders.error)}</p>
      ) : !leaders.data ? (
        <p role="status">Loading the tags and templates…</p>
      ) : (
        <div className="overview-leaders">
          <Leaders title="Tags by volume" noun="tag" items={leaders.data.tagsByVolume} measure="volume" />
          <Leaders title="Tags by bounce rate" noun="tag" items={leaders.data.tagsByBounceRate} measure="bounce" />
          <Leaders title="Templates by volume" noun="template" items={leaders.data.templatesByVolume} measure="volume" />
          <Leaders title="Templates by bounce rate" noun="template" items={leaders.data.templatesByBounceRate} measure="bounce" />
        </div>
      )}
      <p className="hint">
        Counted as things happen, in UTC days: a message accepted one day and delivered the next counts on both. A message with several tags counts under
        each. Rates are over the messages handed to the email service.
      </p>
    </Page>
  );
}

function Totals({ totals, days, failed }: { totals: StatsCounts | undefined; days: number; failed: string | undefined }) {
  return (
    <section className="panel" aria-label={`Last ${days} days`}>
      <h2>Last {days} days</h2>
      {failed ? (
        <p className="error">The statistics could not be read: {failed}</p>
      ) : !totals ? (
        <p role="status">Loading…</p>
      ) : (
        <dl className="fields fields-compact">
          <Field label="Accepted">{formatNumber(totals.accepted)}</Field>
          <Field label="Delivered">{formatNumber(totals.delivered)}</Field>
          <Field label="Bounce rate">{percent(totals.bounceRate)}</Field>
          <Field label="Complaint rate">{percent(totals.complaintRate, 3)}</Field>
        </dl>
      )}
    </section>
  );
}

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function CreditsPanel() {
  const { data, error } = useCredits();
  return (
    <section className="panel" aria-label="Credits">
      <h2>Credits</h2>
      {error ? (
        <p className="error">The balance could not be read.</p>
      ) : !data ? (
        <p role="status">Loading…</p>
      ) : (
        <p>
          <span className={data.low ? "error overview-figure" : "overview-figure"}>{formatNumber(data.balance)}</span> left{data.low ? ", low" : ""}.{" "}
          <Link to="/credits">Balance and ledger</Link>
        </p>
      )}
    </section>
  );
}

/** The sending domains and their state (DomainsService), each linking to its records on the Domains page. */
function DomainsPanel() {
  const { data, error } = useQuery(DomainsService.method.listDomains, {});
  return (
    <section className="panel" aria-label="Sending domains">
      <h2>Sending domains</h2>
      {error ? (
        <p className="error">{errorMessage(error)}</p>
      ) : !data ? (
        <p role="status">Loading…</p>
      ) : data.items.length === 0 ? (
        <p>
          No sending domain yet. <Link to="/domains">Add one</Link> to start sending.
        </p>
      ) : (
        <ul className="overview-domains">
          {data.items.map((domain) => (
            <li key={domain.id}>
              <Link to="/domains">{domain.domain}</Link> <span className={STATUS[domain.status].className}>{STATUS[domain.status].label}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function DayTable({ rows, caption }: { rows: readonly DayRow[]; caption: string }) {
  return (
    <table className="list-table numbers-table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Day (UTC)</th>
          {COUNTS.map((count) => (
            <th key={count.key} scope="col">
              {count.label}
            </th>
          ))}
          <th scope="col">Bounce rate</th>
          <th scope="col">Complaint rate</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.day}>
            <th scope="row">{row.day}</th>
            {COUNTS.map((count) => (
              <td key={count.key}>{formatNumber(row.counts[count.key as CountKey] ?? 0n)}</td>
            ))}
            <td>{percent(row.counts.bounceRate)}</td>
            <td>{percent(row.counts.complaintRate, 3)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function VolumeChart({ rows, days }: { rows: readonly DayRow[]; days: number }) {
  const data = rows.map((row) => ({ day: row.day, ...Object.fromEntries(STACKED.map((s) => [s.key, Number(row.counts[s.key] ?? 0n)])) }));
  return (
    <Figure
      title="Volume by outcome"
      explanation={`What happened to your messages each day of the last ${days} days.`}
      legend={<Legend items={STACKED} />}
      table={<DayTable rows={rows} caption="Messages by outcome, per day" />}
    >
      <ResponsiveContainer width="100%" height={260}>
        <BarChart data={data} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid className="chart-grid" vertical={false} />
          <XAxis dataKey="day" className="chart-axis" minTickGap={16} tickLine={false} />
          <YAxis className="chart-axis" allowDecimals={false} width={48} tickLine={false} />
          <Tooltip cursor={false} isAnimationActive={false} />
          {STACKED.map((s) => (
            <Bar key={s.key} dataKey={s.key} name={s.label} stackId="outcomes" className={`chart-${s.key}`} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </Figure>
  );
}

function RateChart({
  title,
  rows,
  rate,
  thresholds,
  className,
  explanation,
}: {
  title: string;
  rows: readonly DayRow[];
  rate: (counts: StatsCounts) => number | undefined;
  thresholds: readonly Threshold[];
  className: string;
  explanation: string;
}) {
  const data = rows.map((row) => {
    const value = rate(row.counts);
    return { day: row.day, rate: value === undefined ? null : value * 100 };
  });
  const highest = Math.max(...thresholds.map((t) => t.percent), ...data.map((d) => d.rate ?? 0));
  return (
    <Figure
      title={title}
      explanation={`${explanation} Lines: ${thresholds.map((t) => `${formatNumber(t.percent)} % (${t.label})`).join("; ")}.`}
      table={
        <table className="list-table numbers-table">
          <caption className="visually-hidden">{title} per day</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Sent</th>
              <th scope="col">{title}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.day}>
                <th scope="row">{row.day}</th>
                <td>{formatNumber(row.counts.sent ?? 0n)}</td>
                <td>{percent(rate(row.counts), 3)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      <ResponsiveContainer width="100%" height={200}>
        <LineChart data={data} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid className="chart-grid" vertical={false} />
          <XAxis dataKey="day" className="chart-axis" minTickGap={16} tickLine={false} />
          <YAxis className="chart-axis" width={48} tickLine={false} domain={[0, Math.ceil(highest * 1.15 * 100) / 100]} unit=" %" />
          <Tooltip isAnimationActive={false} formatter={(value) => `${formatNumber(Number(value), { maximumFractionDigits: 3 })} %`} />
          {thresholds.map((threshold) => (
            <ReferenceLine
              key={threshold.percent}
              y={threshold.percent}
              className={`chart-threshold chart-threshold-${threshold.level}`}
              label={{ value: `${formatNumber(threshold.percent)} % ${threshold.short}`, position: "insideTopLeft", className: "chart-threshold-label" }}
            />
          ))}
          <Line type="linear" dataKey="rate" name={title} className={className} dot={{ r: 3 }} connectNulls isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
    </Figure>
  );
}

function Leaders({ title, noun, items, measure }: { title: string; noun: "tag" | "template"; items: readonly StatsLeader[]; measure: "volume" | "bounce" }) {
  const id = useId();
  return (
    <section className="panel" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {items.length === 0 ? (
        <p className="hint">No {noun} in this range.</p>
      ) : (
        <table className="leaders-table">
          <thead>
            <tr>
              <th scope="col">{noun === "tag" ? "Tag" : "Template"}</th>
              <th scope="col">{measure === "volume" ? "Accepted" : "Sent"}</th>
              <th scope="col">Bounce rate</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.key}>
                <th scope="row" className={noun === "template" ? "mono break" : "break"}>
                  {item.key}
                </th>
                <td>{formatNumber(measure === "volume" ? (item.counts?.accepted ?? 0n) : (item.counts?.sent ?? 0n))}</td>
                <td>{percent(item.counts?.bounceRate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
