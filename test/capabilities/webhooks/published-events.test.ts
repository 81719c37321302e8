import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/contract/api-error.ts";
import { WEBHOOK_EVENT_NAMES } from "../../../src/capabilities/webhooks/events.ts";
import {
  checkPublishedEvent,
  PUBLISHABLE_EVENTS,
  type PublishEventCommand,
  WebhookEventPublisher,
} from "../../../src/capabilities/webhooks/published-events.ts";
import type { PublishedEventDraft, RecordedPublishedEvent } from "../../../src/capabilities/webhooks/ports.ts";

/**
 * The rules of published events, per kind, without I/O: which data each
 * kind takes, which fields are required or refused, and the `data` of the
 * delivery body the spec's Event kinds table lists.
 */
const at = new Date("2025-11-20T08:30:00.000Z");
const campaign = { campaignId: "cmp", recipientId: "rcp", contactId: "ct", email: "ada@example.com" };
const base = { companyId: "00000000-0000-4000-8000-000000000001", eventId: "e-1", occurredAt: at };

function problems(input: PublishEventCommand): string[] {
  try {
    checkPublishedEvent(input);
    return [];
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.fields.map((f) => `${f.field}: ${f.problem}`);
  }
}

describe("publishable kinds", () => {
  it("are every kind except the three the service records itself", () => {
    expect([...PUBLISHABLE_EVENTS].sort()).toEqual(
      WEBHOOK_EVENT_NAMES.filter((name) => !["message.accepted", "contact.updated", "conversion.recorded"].includes(name)).sort(),
    );
  });
});

describe("the data of a published event", () => {
  it("is the campaign fields with occurredAt; clicked adds linkId; campaign.click adds linkId and suspect", () => {
    expect(checkPublishedEvent({ ...base, event: "opened", campaign }).data).toEqual({ ...campaign, occurredAt: at.toISOString() });
    expect(checkPublishedEvent({ ...base, event: "clicked", campaign: { ...campaign, linkId: "l1" } }).data).toEqual({
      ...campaign,
      occurredAt: at.toISOString(),
      linkId: "l1",
    });
    expect(checkPublishedEvent({ ...base, event: "campaign.click", campaign: { ...campaign, linkId: "l1", suspect: false } }).data).toEqual({
      ...campaign,
      occurredAt: at.toISOString(),
      linkId: "l1",
      suspect: false,
    });
  });

  it("is the counts for campaign.sent, and integrationId, provider and order for orders", () => {
    const counts = { accepted: 5, failed: 1, suppressed: 0, skipped: 2, unknown: 0 };
    expect(checkPublishedEvent({ ...base, event: "campaign.sent", campaignSent: { campaignId: "cmp", ...counts } }).data).toEqual({
      campaignId: "cmp",
      ...counts,
      occurredAt: at.toISOString(),
    });
    const order = { integrationId: "int", provider: "woocommerce", order: { id: 7 } };
    for (const event of ["order.event", "order.created", "order.paid"]) {
      expect(checkPublishedEvent({ ...base, event, order }).data).toEqual(order);
    }
  });
});

describe("refusals, each field named", () => {
  it("names missing and malformed campaign fields, and fields that do not belong to the kind", () => {
    expect(problems({ ...base, event: "clicked", campaign: { campaignId: " ", recipientId: "r", contactId: "c", email: "nope" } })).toEqual([
      "campaign.campaignId: is required",
      "campaign.email: is not an email address",
      "campaign.linkId: is required for clicked",
    ]);
    expect(problems({ ...base, event: "sent", campaign: { ...campaign, linkId: "l", suspect: true } })).toEqual([
      "campaign.linkId: is only for clicked and campaign.click",
      "campaign.suspect: is only for campaign.click",
    ]);
    expect(problems({ ...base, event: "campaign.click", campaign: { ...campaign, linkId: "l" } })).toEqual([
      "campaign.suspect: is required for campaign.click",
    ]);
  });

  it("names the wrong or missing data, a kind the service writes, an unknown kind and a missing time", () => {
    expect(problems({ ...base, event: "order.paid", campaign })).toEqual([
      "campaign: is not the data of order.paid; send order",
      "order: is required for order.paid",
    ]);
    expect(problems({ ...base, event: "conversion.recorded" })).toEqual([
      "event: conversion.recorded is recorded by the service itself and cannot be published",
    ]);
    expect(problems({ ...base, event: "open", campaign })[0]).toMatch(/^event: is not an event name/);
    expect(problems({ ...base, occurredAt: undefined, event: "opened", campaign })).toEqual(["occurredAt: is required"]);
    expect(problems({ ...base, eventId: "x".repeat(201), event: "opened", campaign })).toEqual(["eventId: must be at most 200 characters"]);
  });

  it("refuses counts that are negative, fractional or beyond a safe integer", () => {
    const sent = { campaignId: "c", accepted: -1, failed: 1.5, suppressed: 2 ** 60, skipped: 0, unknown: 0 };
    expect(problems({ ...base, event: "campaign.sent", campaignSent: sent })).toEqual([
      "campaignSent.accepted: must be a whole number, zero or more",
      "campaignSent.failed: must be a whole number, zero or more",
      "campaignSent.suppressed: must be a whole number, zero or more",
    ]);
  });

  it("requires the order itself", () => {
    expect(problems({ ...base, event: "order.created", order: { integrationId: "i", provider: "p", order: undefined } })).toEqual([
      "order.order: is required",
    ]);
  });
});

describe("the publisher", () => {
  function publisherAnswering(outcome: RecordedPublishedEvent): { publisher: WebhookEventPublisher; drafts: PublishedEventDraft[]; nudges: number[] } {
    const drafts: PublishedEventDraft[] = [];
    const nudges: number[] = [];
    const publisher = new WebhookEventPublisher({
      recorder: {
        async record(_companyId, draft) {
          drafts.push(draft);
          return outcome;
        },
      },
      nudge: () => void nudges.push(1),
    });
    return { publisher, drafts, nudges };
  }

  it("records the checked event under the caller's id and nudges the relay only for a new one", async () => {
    const fresh = publisherAnswering({ kind: "recorded", id: "ev-1" });
    expect(await fresh.publisher.publish({ ...base, event: "opened", campaign })).toEqual({ id: "ev-1", replayed: false });
    expect(fresh.drafts).toEqual([{ callerEventId: "e-1", event: "opened", occurredAt: at, data: { ...campaign, occurredAt: at.toISOString() } }]);
    expect(fresh.nudges).toHaveLength(1);

    const replay = publisherAnswering({ kind: "replayed", id: "ev-1" });
    expect(await replay.publisher.publish({ ...base, event: "opened", campaign })).toEqual({ id: "ev-1", replayed: true });
    expect(replay.nudges).toHaveLength(0);
  });

  it("answers IDEMPOTENCY_CONFLICT and NOT_FOUND for what the recorder found", async () => {
    await expect(publisherAnswering({ kind: "conflict", id: "ev-1" }).publisher.publish({ ...base, event: "opened", campaign })).rejects.toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
    });
    await expect(publisherAnswering({ kind: "no_company" }).publisher.publish({ ...base, event: "opened", campaign })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
