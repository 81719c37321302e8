/**
 * Settings that are each valid alone but not together, checked in both
 * modes: the connection to a Temporal cluster with TLS or to Temporal Cloud.
 * No message repeats a value (a path is harmless, an API key is not).
 */
import type { ParsedEnv } from "./env-schema.ts";

/** Where the Temporal client and workers find their TLS material (files, read at start). */
export interface TemporalTlsSettings {
  /** mTLS client certificate and its key (PEM), both or neither. */
  readonly clientCertPath: string | undefined;
  readonly clientKeyPath: string | undefined;
  /** CA of the server's certificate when the system's do not cover it (PEM). */
  readonly serverCaCertPath: string | undefined;
  /** Server name checked in its certificate (SNI), when it differs from the address's host. */
  readonly serverName: string | undefined;
}

export function temporalTlsProblems(e: ParsedEnv): string[] {
  const problems: string[] = [];
  const cert = e.TEMPORAL_TLS_CLIENT_CERT_PATH;
  const key = e.TEMPORAL_TLS_CLIENT_KEY_PATH;
  if ((cert === undefined) !== (key === undefined)) {
    const [set, unset] = cert === undefined ? ["TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_CLIENT_CERT_PATH"] : ["TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH"];
    problems.push(`${set} is set without ${unset}: mTLS needs the client certificate and its key`);
  }
  if (e.TEMPORAL_TLS === false) {
    const needTls = [
      "TEMPORAL_TLS_CLIENT_CERT_PATH",
      "TEMPORAL_TLS_CLIENT_KEY_PATH",
      "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
      "TEMPORAL_TLS_SERVER_NAME",
      "TEMPORAL_API_KEY",
    ] as const;
    const set = needTls.filter((name) => e[name] !== undefined);
    if (set.length > 0) {
      problems.push(
        `TEMPORAL_TLS=false contradicts ${set.join(", ")}: TLS settings need TLS, and an API key must not cross the network in clear text (unset TEMPORAL_TLS)`,
      );
    }
  }
  return problems;
}

/** TLS of the operator listener: a certificate chain and its private key (PEM files, read at start). */
export interface OperatorTlsSettings {
  readonly certPath: string;
  readonly keyPath: string;
}

export function operatorTlsProblems(e: ParsedEnv): string[] {
  const cert = e.OPERATOR_TLS_CERT_PATH;
  const key = e.OPERATOR_TLS_KEY_PATH;
  if ((cert === undefined) === (key === undefined)) return [];
  const [set, unset] = cert === undefined ? ["OPERATOR_TLS_KEY_PATH", "OPERATOR_TLS_CERT_PATH"] : ["OPERATOR_TLS_CERT_PATH", "OPERATOR_TLS_KEY_PATH"];
  return [`${set} is set without ${unset}: the operator listener's TLS needs the certificate and its key`];
}

export function operatorTlsOf(e: ParsedEnv): OperatorTlsSettings | undefined {
  const certPath = e.OPERATOR_TLS_CERT_PATH;
  const keyPath = e.OPERATOR_TLS_KEY_PATH;
  return certPath !== undefined && keyPath !== undefined ? { certPath, keyPath } : undefined;
}

/** TLS towards Temporal: explicitly on, or implied by a client certificate, a CA, a server name or an API key. */
export function temporalTlsOf(e: ParsedEnv): TemporalTlsSettings | undefined {
  const implied =
    e.TEMPORAL_TLS_CLIENT_CERT_PATH !== undefined ||
    e.TEMPORAL_TLS_SERVER_CA_CERT_PATH !== undefined ||
    e.TEMPORAL_TLS_SERVER_NAME !== undefined ||
    e.TEMPORAL_API_KEY !== undefined;
  if (e.TEMPORAL_TLS === false || (e.TEMPORAL_TLS === undefined && !implied)) return undefined;
  return {
    clientCertPath: e.TEMPORAL_TLS_CLIENT_CERT_PATH,
    clientKeyPath: e.TEMPORAL_TLS_CLIENT_KEY_PATH,
    serverCaCertPath: e.TEMPORAL_TLS_SERVER_CA_CERT_PATH,
    serverName: e.TEMPORAL_TLS_SERVER_NAME,
  };
}
