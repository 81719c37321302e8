import { createSocket } from "node:dgram";
import { createServer, type Socket } from "node:net";

/**
 * A nameserver on 127.0.0.1 (UDP and TCP on one port) that answers A
 * queries from a table until it is told to go silent, and from then on
 * takes every query and says nothing (a black-holed or overloaded resolver).
 * Starts silent when the table is empty. AAAA and other queries of a known
 * name answer no records; unknown names are NXDOMAIN while it answers.
 */
export interface SilentNameserver {
  /** `127.0.0.1:<port>`, for Resolver#setServers. */
  readonly address: string;
  /** Queries received so far, answered or not. */
  readonly queries: () => number;
  /** Answers `name` with one A record (and the server answers again). */
  answer(name: string, ipv4: string): void;
  /** Stops answering anything. */
  silence(): void;
  close(): Promise<void>;
}

const TYPE_A = 1;

function readQuestion(packet: Buffer): { name: string; type: number; end: number } | undefined {
  try {
    const labels: string[] = [];
    let offset = 12;
    for (;;) {
      const length = packet.readUInt8(offset);
      if (length === 0) break;
      if (length > 63) return undefined;
      labels.push(packet.subarray(offset + 1, offset + 1 + length).toString("ascii"));
      offset += 1 + length;
    }
    const type = packet.readUInt16BE(offset + 1);
    return { name: labels.join(".").toLowerCase(), type, end: offset + 5 };
  } catch {
    return undefined;
  }
}

function reply(query: Buffer, table: ReadonlyMap<string, string>): Buffer | undefined {
  const question = readQuestion(query);
  if (!question) return undefined;
  const address = table.get(question.name);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  // Response, authoritative, recursion desired/available; NXDOMAIN for unknown names.
  header.writeUInt16BE(0x8580 | (address === undefined ? 3 : 0), 2);
  header.writeUInt16BE(1, 4);
  const withAnswer = address !== undefined && question.type === TYPE_A;
  header.writeUInt16BE(withAnswer ? 1 : 0, 6);
  const parts = [header, query.subarray(12, question.end)];
  if (withAnswer) {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(TYPE_A, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(0, 6);
    record.writeUInt16BE(4, 10);
    address.split(".").forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    parts.push(record);
  }
  return Buffer.concat(parts);
}

export async function startSilentNameserver(): Promise<SilentNameserver> {
  let queries = 0;
  let answering = false;
  const table = new Map<string, string>();
  const udp = createSocket("udp4");
  udp.on("message", (packet, from) => {
    queries++;
    if (!answering) return;
    const answer = reply(packet, table);
    if (answer) udp.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const port = udp.address().port;
  const sockets = new Set<Socket>();
  // TCP: taken and never answered (clients ask over UDP first; answers here are small).
  const tcp = createServer((socket) => {
    queries++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, "127.0.0.1", resolve);
  });
  return {
    address: `127.0.0.1:${port}`,
    queries: () => queries,
    answer(name, ipv4) {
      table.set(name.toLowerCase(), ipv4);
      answering = true;
    },
    silence() {
      answering = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    },
  };
}
