import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type Campaign, CampaignContentSchema, CampaignsService, CampaignState } from "@gen/mail/v1/campaigns_pb.js";
import { SendersService } from "@gen/mail/v1/domains_pb.js";
import { ListsService } from "@gen/mail/v1/lists_pb.js";
import { TemplatesService } from "@gen/mail/v1/templates_pb.js";
import { useEffect, useId, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { errorMessage, isNotFound } from "../../app/errors.ts";
import { DateTime, formatNumber, fromLocalInput } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { Page } from "../../components/Page.tsx";
import { RenderedPreview, usePreview } from "../templates/preview.tsx";
import { EngagementChart, LinkClicksChart, RevenueTable } from "./ResultsCharts.tsx";
import { CampaignStateBadge, isLive } from "./states.tsx";

/** How often a scheduled or sending campaign is read again (its progress). */
const LIVE_INTERVAL_MS = 3000;

/** What the editor holds, as typed. */
interface Draft {
  readonly name: string;
  readonly listIds: readonly string[];
  readonly tag: string;
  readonly source: "template" | "written";
  readonly templateId: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  readonly senderId: string;
  readonly replyTo: string;
  readonly trackOpens: boolean;
  readonly trackClicks: boolean;
}

const NEW_CAMPAIGN: Draft = {
  name: "",
  listIds: [],
  tag: "",
  source: "written",
  templateId: "",
  subject: "",
  html: "<p>Hello {{ firstName | default:there }},</p>\n",
  text: "",
  senderId: "",
  replyTo: "",
  trackOpens: true,
  trackClicks: true,
};

function draftOf(campaign: Campaign): Draft {
  const content = campaign.content;
  return {
    name: campaign.name,
    listIds: campaign.audience?.listIds ?? [],
    tag: campaign.audience?.tag ?? "",
    source: content?.templateId ? "template" : "written",
    templateId: content?.templateId ?? "",
    subject: content?.subject ?? "",
    html: content?.html ?? "",
    text: content?.text ?? "",
    senderId: campaign.senderId ?? "",
    replyTo: campaign.replyTo ?? "",
    trackOpens: campaign.trackOpens,
    trackClicks: campaign.trackClicks,
  };
}

function Breadcrumb({ current }: { current: string }) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <Link to="/campaigns">Campaigns</Link> / <span aria-current="page">{current}</span>
    </nav>
  );
}

/** /admin/campaigns/:campaignId (or /new): one campaign, its draft, audience, actions and results; read again every few seconds while it moves. */
export function CampaignEditor() {
  const { campaignId } = useParams();
  const query = useQuery(
    CampaignsService.method.getCampaign,
    { id: campaignId ?? "" },
    {
      enabled: campaignId !== undefined,
      refetchInterval: (current) => {
        const state = current.state.data?.campaign?.state;
        return state !== undefined && isLive(state) ? LIVE_INTERVAL_MS : false;
      },
    },
  );
  const campaign = query.data?.campaign;
  if (campaignId === undefined) return <Editor key="new" />;
  if (query.isPending) return <p role="status">Loading the campaign…</p>;
  if (query.isError) {
    return (
      <Page before={<Breadcrumb current="Campaign" />} title={isNotFound(query.error) ? "Campaign not found" : "The campaign could not be read"}>
        <p role="alert">{isNotFound(query.error) ? "Your company has no campaign with this id." : errorMessage(query.error)}</p>
      </Page>
    );
  }
  return campaign ? <Editor key={`${campaign.id}:${campaign.updatedAt?.seconds ?? ""}`} campaign={campaign} /> : null;
}

function Editor({ campaign }: { campaign?: Campaign }) {
  const { isAdmin } = useSession();
  const navigate = useNavigate();
  const refresh = useRefresh(CampaignsService);
  const saved = campaign ? draftOf(campaign) : NEW_CAMPAIGN;
  const [draft, setDraft] = useState<Draft>(saved);
  const editable = isAdmin && (!campaign || campaign.state === CampaignState.DRAFT);
  const createCampaign = useMutation(CampaignsService.method.createCampaign);
  const updateCampaign = useMutation(CampaignsService.method.updateCampaign);
  const lists = useQuery(ListsService.method.listContactLists, {});
  const templates = useQuery(TemplatesService.method.listTemplates, {});
  const senders = useQuery(SendersService.method.listSenders, {});
  const ids = { name: useId(), tag: useId(), template: useId(), subject: useId(), html: useId(), text: useId(), sender: useId(), replyTo: useId() };
  const set = <K extends keyof Draft>(part: K, value: Draft[K]) => setDraft((current) => ({ ...current, [part]: value }));
  const dirty = !campaign || JSON.stringify(draft) !== JSON.stringify(saved);
  const saving = createCampaign.isPending || updateCampaign.isPending;
  const saveError = createCampaign.error ?? updateCampaign.error;

  const onSave = async () => {
    const audience = { listIds: [...draft.listIds], ...(draft.tag !== "" ? { tag: draft.tag } : {}) };
    const content =
      draft.source === "template"
        ? create(CampaignContentSchema, { templateId: draft.templateId })
        : create(CampaignContentSchema, { subject: draft.subject, html: draft.html, ...(draft.text !== "" ? { text: draft.text } : {}) });
    if (campaign) {
      await updateCampaign.mutateAsync({
        id: campaign.id,
        name: draft.name,
        audience,
        content,
        senderId: draft.senderId,
        replyTo: draft.replyTo,
        trackOpens: draft.trackOpens,
        trackClicks: draft.trackClicks,
      });
      await refresh();
      return;
    }
    const answer = await createCampaign.mutateAsync({
      name: draft.name,
      audience,
      content,
      ...(draft.senderId !== "" ? { senderId: draft.senderId } : {}),
      ...(draft.replyTo !== "" ? { replyTo: draft.replyTo } : {}),
      trackOpens: draft.trackOpens,
      trackClicks: draft.trackClicks,
    });
    await refresh();
    if (answer.campaign) await navigate(`/campaigns/${answer.campaign.id}`);
  };

  const toggleList = (id: string, on: boolean) => set("listIds", on ? [...draft.listIds, id] : draft.listIds.filter((listId) => listId !== id));

  return (
    <Page
      before={<Breadcrumb current={campaign?.name ?? "New campaign"} />}
      title={campaign ? campaign.name : "New campaign"}
      actions={
        campaign ? (
          <span data-testid="campaign-state">
            <CampaignStateBadge state={campaign.state} />
          </span>
        ) : undefined
      }
    >
      {campaign && !editable ? <p className="hint">{isAdmin ? "Only a draft can be changed." : "You can read campaigns; owners and admins change them."}</p> : null}
      <form
        className="form"
        aria-label="Campaign"
        onSubmit={(event) => {
          event.preventDefault();
          void onSave().catch(() => undefined);
        }}
      >
        <fieldset className="fields-group" disabled={!editable}>
          <div className="field">
            <label htmlFor={ids.name}>Name</label>
            <input id={ids.name} value={draft.name} onChange={(event) => set("name", event.target.value)} autoComplete="off" required maxLength={200} />
          </div>
          <fieldset className="choices">
            <legend>Audience: lists</legend>
            {lists.data?.items.length === 0 ? <p className="hint">No list yet: create one in Lists.</p> : null}
            {lists.data?.items.map((list) => (
              <label key={list.id} className="choice">
                <input type="checkbox" checked={draft.listIds.includes(list.id)} onChange={(event) => toggleList(list.id, event.target.checked)} /> {list.name} (
                {formatNumber(list.memberCount)} contacts)
              </label>
            ))}
          </fieldset>
          <div className="field">
            <label htmlFor={ids.tag}>Only contacts with the tag (optional)</label>
            <input id={ids.tag} value={draft.tag} onChange={(event) => set("tag", event.target.value)} autoComplete="off" maxLength={100} />
          </div>
          <fieldset className="choices">
            <legend>Content</legend>
            <label className="choice">
              <input type="radio" name="source" checked={draft.source === "written"} onChange={() => set("source", "written")} /> Written here
            </label>
            <label className="choice">
              <input type="radio" name="source" checked={draft.source === "template"} onChange={() => set("source", "template")} /> From a template
            </label>
          </fieldset>
          {draft.source === "template" ? (
            <div className="field">
              <label htmlFor={ids.template}>Template</label>
              <select id={ids.template} value={draft.templateId} onChange={(event) => set("templateId", event.target.value)} required>
                <option value="">Choose a template</option>
                {templates.data?.templates.map((template) => (
                  <option key={template.id} value={template.id}>
                    {template.name}
                  </option>
                ))}
              </select>
            </div>
          ) : (
            <>
              <div className="field">
                <label htmlFor={ids.subject}>Subject</label>
                <input id={ids.subject} value={draft.subject} onChange={(event) => set("subject", event.target.value)} autoComplete="off" required maxLength={998} />
              </div>
              <div className="field">
                <label htmlFor={ids.html}>HTML</label>
                <textarea id={ids.html} rows={8} className="mono" value={draft.html} onChange={(event) => set("html", event.target.value)} required />
              </div>
              <div className="field">
                <label htmlFor={ids.text}>Text version (optional)</label>
                <textarea id={ids.text} rows={4} value={draft.text} onChange={(event) => set("text", event.target.value)} />
              </div>
            </>
          )}
          <div className="field">
            <label htmlFor={ids.sender}>Sender</label>
            <select id={ids.sender} value={draft.senderId} onChange={(event) => set("senderId", event.target.value)}>
              <option value="">The default sender</option>
              {senders.data?.items.map((sender) => (
                <option key={sender.id} value={sender.id}>
                  {sender.name ? `${sender.name} <${sender.email}>` : sender.email}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.replyTo}>Reply-To (optional)</label>
            <input id={ids.replyTo} type="email" value={draft.replyTo} onChange={(event) => set("replyTo", event.target.value)} autoComplete="off" maxLength={254} />
          </div>
          <label className="choice">
            <input type="checkbox" checked={draft.trackOpens} onChange={(event) => set("trackOpens", event.target.checked)} /> Count opens
          </label>
          <label className="choice">
            <input type="checkbox" checked={draft.trackClicks} onChange={(event) => set("trackClicks", event.target.checked)} /> Count clicks
          </label>
        </fieldset>
        {saveError ? (
          <p role="alert" className="error">
            {errorMessage(saveError)}
          </p>
        ) : null}
        {editable ? (
          <div className="actions">
            <button type="submit" className="button button-primary" disabled={saving || !dirty}>
              {saving ? "Saving…" : campaign ? "Save draft" : "Create draft"}
            </button>
            {campaign && !dirty ? <span className="muted">Saved.</span> : null}
          </div>
        ) : null}
      </form>
      <ContentPreview draft={draft} />
      {campaign && campaign.state === CampaignState.DRAFT ? <AudiencePreview campaign={campaign} /> : null}
      {campaign && isAdmin ? <Actions campaign={campaign} dirty={dirty} /> : null}
      {campaign && campaign.state !== CampaignState.DRAFT ? <Results campaign={campaign} /> : null}
    </Page>
  );
}

/**
 * The content as a recipient gets it, rendered by the server as a send
 * renders it, with the signed-in member's address as the recipient (as
 * for a test copy); tracked links, the pixel and the unsubscribe footer are
 * added to each copy when it is sent.
 */
function ContentPreview({ draft }: { draft: Draft }) {
  const { session } = useSession();
  const variables = { email: session.member?.email ?? "reader@example.com" };
  const fromTemplate = draft.source === "template";
  const preview = usePreview(
    fromTemplate
      ? { templateId: draft.templateId, variables }
      : { subject: draft.subject, html: draft.html, ...(draft.text !== "" ? { text: draft.text } : {}), variables },
  );
  return (
    <section className="panel" aria-labelledby="content-preview-title">
      <h2 id="content-preview-title">Preview</h2>
      <p className="hint">As your own address would receive it. Each copy also gets its tracked links and the unsubscribe footer when it is sent.</p>
      {fromTemplate && draft.templateId === "" ? (
        <p className="muted">Choose a template to see it.</p>
      ) : preview.isError ? (
        <p role="alert" className="error">
          {errorMessage(preview.error)}
        </p>
      ) : preview.data ? (
        <RenderedPreview data={preview.data} />
      ) : (
        <p role="status">Rendering the preview…</p>
      )}
    </section>
  );
}

/** How many the saved draft would reach now, and how many it would skip or suppress (the audience is fixed only when sending starts). */
function AudiencePreview({ campaign }: { campaign: Campaign }) {
  const preview = useQuery(CampaignsService.method.previewCampaignAudience, { id: campaign.id });
  return (
    <section className="panel" aria-labelledby="audience-title">
      <h2 id="audience-title">Audience</h2>
      {preview.isPending ? <p role="status">Counting the audience…</p> : null}
      {preview.isError ? (
        <p role="alert" className="error">
          {errorMessage(preview.error)}
        </p>
      ) : null}
      {preview.data ? (
        <p data-testid="audience-preview">
          {formatNumber(preview.data.receive)} will receive it; {formatNumber(preview.data.skipped)} skipped (pending or unsubscribed),{" "}
          {formatNumber(preview.data.suppressed)} suppressed, of {formatNumber(preview.data.audience)} contacts.
        </p>
      ) : null}
    </section>
  );
}

/** The member's time zone, as the browser names it. */
function timeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function Actions({ campaign, dirty }: { campaign: Campaign; dirty: boolean }) {
  const { session } = useSession();
  const refresh = useRefresh(CampaignsService);
  const scheduleId = useId();
  const [when, setWhen] = useState("");
  const test = useMutation(CampaignsService.method.sendCampaignTest);
  const schedule = useMutation(CampaignsService.method.scheduleCampaign);
  const pause = useMutation(CampaignsService.method.pauseCampaign);
  const resume = useMutation(CampaignsService.method.resumeCampaign);
  const cancel = useMutation(CampaignsService.method.cancelCampaign);
  const state = campaign.state;
  const error = test.error ?? schedule.error ?? pause.error ?? resume.error;
  const at = fromLocalInput(when);

  const doSchedule = async (sendAt: Date | undefined) => {
    await schedule.mutateAsync({ id: campaign.id, ...(sendAt ? { sendAt: timestampFromDate(sendAt) } : {}) });
    await refresh();
  };

  return (
    <section className="panel" aria-labelledby="actions-title">
      <h2 id="actions-title">Send</h2>
      {campaign.sendAt && state !== CampaignState.DRAFT ? (
        <p>
          Send time: <DateTime value={campaign.sendAt} />
        </p>
      ) : null}
      {state === CampaignState.DRAFT ? (
        <>
          <p>
            A test goes to your own address, <span className="mono">{session.member?.email ?? ""}</span>, with the saved content.
          </p>
          <div className="actions actions-start">
            <button type="button" className="button" disabled={test.isPending || dirty} onClick={() => test.mutate({ id: campaign.id })}>
              {test.isPending ? "Sending…" : "Send a test to me"}
            </button>
            {dirty ? <span className="muted">Save first.</span> : null}
          </div>
          {test.data ? <p role="status">Test sent to {test.data.email}.</p> : null}
          <div className="field">
            <label htmlFor={scheduleId}>Send at (your time zone, {timeZone()})</label>
            <input id={scheduleId} type="datetime-local" value={when} onChange={(event) => setWhen(event.target.value)} />
          </div>
          <div className="actions actions-start">
            <button type="button" className="button" disabled={!at || dirty || schedule.isPending} onClick={() => void doSchedule(at).catch(() => undefined)}>
              Schedule
            </button>
            <button type="button" className="button button-primary" disabled={dirty || schedule.isPending} onClick={() => void doSchedule(undefined).catch(() => undefined)}>
              Send now
            </button>
          </div>
        </>
      ) : null}
      <div className="actions actions-start">
        {state === CampaignState.SENDING ? (
          <button
            type="button"
            className="button"
            disabled={pause.isPending}
            onClick={() => void pause.mutateAsync({ id: campaign.id }).then(refresh).catch(() => undefined)}
          >
            Pause
          </button>
        ) : null}
        {state === CampaignState.PAUSED ? (
          <button
            type="button"
            className="button"
            disabled={resume.isPending}
            onClick={() => void resume.mutateAsync({ id: campaign.id }).then(refresh).catch(() => undefined)}
          >
            Resume
          </button>
        ) : null}
        {state === CampaignState.SCHEDULED || state === CampaignState.SENDING || state === CampaignState.PAUSED ? (
          <ConfirmAction
            label="Cancel"
            ariaLabel={`Cancel ${campaign.name}`}
            title={`Cancel the campaign ${campaign.name}?`}
            description={<p>Recipients not handed over yet receive nothing; copies already handed over stay sent.</p>}
            confirmLabel="Cancel campaign"
            destructive
            onConfirm={async () => {
              await cancel.mutateAsync({ id: campaign.id });
              await refresh();
            }}
          />
        ) : null}
      </div>
      {error ? (
        <p role="alert" className="error">
          {errorMessage(error)}
        </p>
      ) : null}
    </section>
  );
}

/** The counters and the engagement, read again with the campaign while it moves. */
function Results({ campaign }: { campaign: Campaign }) {
  const results = useQuery(CampaignsService.method.getCampaignResults, { id: campaign.id }, { refetchInterval: isLive(campaign.state) ? LIVE_INTERVAL_MS : false });
  const { refetch } = results;
  // The campaign is read again while it moves; its engagement follows each change, the last one (sent, cancelled) included.
  const changed = `${campaign.state}:${campaign.updatedAt?.seconds ?? ""}:${campaign.counters?.waiting ?? ""}`;
  useEffect(() => {
    void refetch();
  }, [changed, refetch]);
  const data = results.data;
  // The campaign's own counters: read every few seconds with it while sending.
  const counters = campaign.counters ?? data?.counters;
  const rows: [string, number][] = counters
    ? [
        ["Audience", counters.audience],
        ["Accepted", counters.accepted],
        ["Failed", counters.failed],
        ["Suppressed", counters.suppressed],
        ["Skipped", counters.skipped],
        ["Unknown", counters.unknown],
        ["Waiting", counters.waiting],
      ]
    : [];
  if (data) rows.push(["Opened", data.opened], ["Clicked", data.clicked], ["Unsubscribed", data.unsubscribed]);
  return (
    <section className="panel" aria-labelledby="results-title">
      <h2 id="results-title">Results</h2>
      <p>
        Started: <DateTime value={campaign.startedAt} empty="not yet" />; ended: <DateTime value={campaign.finishedAt} empty="not yet" />
      </p>
      {results.isError ? (
        <p role="alert" className="error">
          {errorMessage(results.error)}
        </p>
      ) : null}
      <div>
        <table className="list-table numbers-table">
          <caption className="visually-hidden">Results of the campaign</caption>
          <thead>
            <tr>
              <th scope="col">Counter</th>
              <th scope="col">Recipients</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, value]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td className="number">{formatNumber(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data ? (
        <>
          <EngagementChart timeline={data.timeline} interval={data.interval} />
          <LinkClicksChart links={data.links} />
          <RevenueTable revenue={data.revenue} />
        </>
      ) : null}
    </section>
  );
}
