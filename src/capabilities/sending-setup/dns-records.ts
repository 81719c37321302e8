/**
 * The DNS records a company publishes for a sending domain, and their names.
 *
 * - DKIM: TXT `<selector>._domainkey.<domain>` holding our public key.
 * - Custom MAIL FROM (return path) `bounces.<domain>`: a TXT SPF record that
 *   includes our sending servers, and an MX to our bounce host. The envelope
 *   sender is then on the company's own domain, so SPF passes *and* aligns
 *   with the From domain for DMARC; bounces come back to us through the MX.
 * - DMARC: TXT `_dmarc.<domain>`; `p=none` is only our suggestion, any
 *   valid DMARC1 record passes.
 */
export type DnsRecordPurpose = "dkim" | "spf" | "return_path" | "dmarc";

/** The outcome of one record's last check: found and correct, absent, or present but not as asked. */
export type DnsRecordState = "unchecked" | "verified" | "missing" | "wrong";

/** One record as a check saw it: its state and what the resolver returned. */
export interface DnsRecordCheck {
  readonly purpose: DnsRecordPurpose;
  readonly state: Exclude<DnsRecordState, "unchecked">;
  /** TXT strings joined, MX as `<priority> <host>`; empty when missing. */
  readonly found: readonly string[];
}

export interface DnsRecordView {
  readonly type: "TXT" | "MX";
  /** Fully qualified, without the trailing dot. */
  readonly name: string;
  readonly value: string;
  readonly purpose: DnsRecordPurpose;
  readonly verified: boolean;
  readonly state: DnsRecordState;
  readonly found: readonly string[];
}

/** What the records of one domain are made of. */
export interface DomainDnsFacts {
  readonly domain: string;
  readonly returnPathDomain: string;
  readonly dkimSelector: string;
  /** Base64 DER, as in the `p=` tag. */
  readonly dkimPublicKey: string;
}

export interface DnsSettings {
  /** `include:<spfInclude>` in the return-path SPF record. */
  readonly spfInclude: string;
  /** MX target of every return-path domain. */
  readonly returnPathMxHost: string;
}

export interface DnsCheckState {
  readonly dkim: boolean;
  readonly spf: boolean;
  readonly dmarc: boolean;
}

/** A DNS check: the three verdicts and each record as seen. */
export interface DnsCheckReport extends DnsCheckState {
  readonly records: readonly DnsRecordCheck[];
}

export const DMARC_SUGGESTION = "v=DMARC1; p=none";
const RETURN_PATH_LABEL = "bounces";
const MX_PRIORITY = 10;

export function returnPathDomainFor(domain: string): string {
  return `${RETURN_PATH_LABEL}.${domain}`;
}

export function dkimRecordName(selector: string, domain: string): string {
  return `${selector}._domainkey.${domain}`;
}

export function dmarcRecordName(domain: string): string {
  return `_dmarc.${domain}`;
}

export function spfRecordValue(spfInclude: string): string {
  return `v=spf1 include:${spfInclude} -all`;
}

/**
 * The records to publish, each with the outcome of the last check (`checks`,
 * null before the first). The SPF TXT and the MX form one verdict (spf):
 * both make the return-path domain work.
 */
export function requiredDnsRecords(facts: DomainDnsFacts, settings: DnsSettings, checks: readonly DnsRecordCheck[] | null): DnsRecordView[] {
  const seen = (purpose: DnsRecordPurpose): Pick<DnsRecordView, "verified" | "state" | "found"> => {
    const check = checks?.find((one) => one.purpose === purpose);
    return check ? { verified: check.state === "verified", state: check.state, found: check.found } : { verified: false, state: "unchecked", found: [] };
  };
  return [
    { type: "TXT", name: dkimRecordName(facts.dkimSelector, facts.domain), value: `v=DKIM1; k=rsa; p=${facts.dkimPublicKey}`, purpose: "dkim", ...seen("dkim") },
    { type: "TXT", name: facts.returnPathDomain, value: spfRecordValue(settings.spfInclude), purpose: "spf", ...seen("spf") },
    { type: "MX", name: facts.returnPathDomain, value: `${MX_PRIORITY} ${settings.returnPathMxHost}`, purpose: "return_path", ...seen("return_path") },
    { type: "TXT", name: dmarcRecordName(facts.domain), value: DMARC_SUGGESTION, purpose: "dmarc", ...seen("dmarc") },
  ];
}
