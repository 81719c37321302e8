/**
 * A tiny authoritative DNS server for tests, on 127.0.0.1, over UDP and TCP
 * on one port, answering TXT and MX queries from records the test sets.
 * Point a `node:dns` Resolver at `server.address` to exercise real lookups.
 *
 * Hand-written because no DNS package is a dependency: just enough of
 * RFC 1035 (header, one question, answers with a compression pointer to the
 * question name), plus truncation and TCP fallback, because a DKIM record of
 * a 2048-bit key is close to the classic 512-byte UDP limit.
 */
import { createSocket, type Socket } from "node:dgram";
import { createServer, type Server } from "node:net";

const TYPE_TXT = 16;
const TYPE_MX = 15;
const TYPE_OPT = 41;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

interface Zone {
  txt: Buffer[][];
  mx: { priority: number; exchange: string }[];
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for Resolver#setServers / config.dnsServers. */
  readonly address: string;
  /** Publishes TXT records at `name`; a string longer than 255 bytes is split into chunks, as DNS hosts do. */
  addTxt(name: string, ...records: (string | string[])[]): void;
  addMx(name: string, exchange: string, priority?: number): void;
  /** Removes every record of `name` (all names when omitted). */
  clear(name?: string): void;
  /** Answers SERVFAIL for `name` (a broken upstream), until cleared. */
  failName(name: string): void;
  /** Queries answered so far (lower-cased name and type), for assertions. */
  readonly queries: { name: string; type: number; tcp: boolean }[];
  close(): Promise<void>;
}

function key(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

function chunks(text: string): Buffer[] {
  const bytes = Buffer.from(text, "utf8");
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length > 0 ? out : [Buffer.alloc(0)];
}

function encodeName(name: string): Buffer {
  const parts = key(name)
    .split(".")
    .filter((label) => label !== "")
    .map((label) => {
      const bytes = Buffer.from(label, "ascii");
      return Buffer.concat([Buffer.from([bytes.length]), bytes]);
    });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

interface Query {
  id: number;
  flags: number;
  name: string;
  type: number;
  /** The question section as received (echoed back). */
  question: Buffer;
  /** Largest UDP answer the client accepts (EDNS0 OPT, else 512). */
  udpSize: number;
}

function readName(packet: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let offset = start;
  for (;;) {
    const length = packet.readUInt8(offset);
    if (length === 0) return { name: labels.join("."), end: offset + 1 };
    // Queries carry no compression pointers; refuse anything odd.
    if (length > 63) throw new Error("unexpected label");
    labels.push(packet.toString("ascii", offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
}

function parseQuery(packet: Buffer): Query {
  const id = packet.readUInt16BE(0);
  const flags = packet.readUInt16BE(2);
  const qdcount = packet.readUInt16BE(4);
  const arcount = packet.readUInt16BE(10);
  if (qdcount !== 1) throw new Error("one question expected");
  const { name, end } = readName(packet, 12);
  const type = packet.readUInt16BE(end);
  const questionEnd = end + 4;
  let udpSize = 512;
  let offset = questionEnd;
  for (let i = 0; i < arcount; i++) {
    const rr = readName(packet, offset);
    const rrType = packet.readUInt16BE(rr.end);
    // For OPT, the CLASS field is the requester's UDP payload size.
    if (rrType === TYPE_OPT) udpSize = Math.max(512, packet.readUInt16BE(rr.end + 2));
    const rdLength = packet.readUInt16BE(rr.end + 8);
    offset = rr.end + 10 + rdLength;
  }
  return { id, flags, name: key(name), type, question: packet.subarray(12, questionEnd), udpSize };
}

function answer(rrType: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // pointer to the question name
  head.writeUInt16BE(rrType, 2);
  head.writeUInt16BE(1, 4); // class IN
  head.writeUInt32BE(60, 6); // ttl
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

function header(query: Query, rcode: number, answers: number, truncated: boolean): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(query.id, 0);
  // QR, AA, RD copied, TC when truncated.
  const flags = 0x8000 | 0x0400 | (query.flags & 0x0100) | (truncated ? 0x0200 : 0) | rcode;
  head.writeUInt16BE(flags, 2);
  head.writeUInt16BE(1, 4);
  head.writeUInt16BE(answers, 6);
  return head;
}

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const zones = new Map<string, Zone>();
  const failing = new Set<string>();
  const queries: { name: string; type: number; tcp: boolean }[] = [];

  const respond = (packet: Buffer, tcp: boolean): Buffer | undefined => {
    let query: Query;
    try {
      query = parseQuery(packet);
    } catch {
      return undefined;
    }
    queries.push({ name: query.name, type: query.type, tcp });
    if (failing.has(query.name)) return Buffer.concat([header(query, RCODE_SERVFAIL, 0, false), query.question]);
    const zone = zones.get(query.name);
    if (!zone) return Buffer.concat([header(query, RCODE_NXDOMAIN, 0, false), query.question]);
    const answers: Buffer[] = [];
    if (query.type === TYPE_TXT) {
      for (const record of zone.txt) {
        answers.push(answer(TYPE_TXT, Buffer.concat(record.flatMap((chunk) => [Buffer.from([chunk.length]), chunk]))));
      }
    } else if (query.type === TYPE_MX) {
      for (const mx of zone.mx) {
        const preference = Buffer.alloc(2);
        preference.writeUInt16BE(mx.priority);
        answers.push(answer(TYPE_MX, Buffer.concat([preference, encodeName(mx.exchange)])));
      }
    }
    // Name exists, no record of the type: NOERROR with no answers (NODATA).
    const full = Buffer.concat([header(query, 0, answers.length, false), query.question, ...answers]);
    if (!tcp && full.length > query.udpSize) return Buffer.concat([header(query, 0, 0, true), query.question]);
    return full;
  };

  const { udp, tcp, port } = await bindBoth(respond);

  const zone = (name: string): Zone => {
    const k = key(name);
    let z = zones.get(k);
    if (!z) zones.set(k, (z = { txt: [], mx: [] }));
    return z;
  };

  return {
    address: `127.0.0.1:${port}`,
    queries,
    addTxt(name, ...records) {
      for (const record of records) zone(name).txt.push(typeof record === "string" ? chunks(record) : record.map((c) => Buffer.from(c, "utf8")));
    },
    addMx(name, exchange, priority = 10) {
      zone(name).mx.push({ priority, exchange });
    },
    clear(name) {
      if (name === undefined) {
        zones.clear();
        failing.clear();
      } else {
        zones.delete(key(name));
        failing.delete(key(name));
      }
    },
    failName(name) {
      failing.add(key(name));
    },
    async close() {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/** A UDP socket and a TCP server on the same free port (retried if TCP finds it taken). */
async function bindBoth(respond: (packet: Buffer, tcp: boolean) => Buffer | undefined): Promise<{ udp: Socket; tcp: Server; port: number }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = createSocket("udp4");
    udp.on("message", (packet, peer) => {
      const reply = respond(packet, false);
      if (reply) udp.send(reply, peer.port, peer.address);
    });
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
    const port = udp.address().port;
    const tcp = createServer((socket) => {
      let buffered = Buffer.alloc(0);
      socket.on("data", (data: Buffer) => {
        buffered = Buffer.concat([buffered, data]);
        while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
          const length = buffered.readUInt16BE(0);
          const reply = respond(buffered.subarray(2, 2 + length), true);
          buffered = buffered.subarray(2 + length);
          if (reply) {
            const prefix = Buffer.alloc(2);
            prefix.writeUInt16BE(reply.length);
            socket.write(Buffer.concat([prefix, reply]));
          }
        }
      });
      socket.on("error", () => socket.destroy());
    });
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once("error", () => resolve(false));
      tcp.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (listening) return { udp, tcp, port };
    await new Promise<void>((resolve) => udp.close(() => resolve()));
  }
  throw new Error("no free port for the test DNS server");
}
