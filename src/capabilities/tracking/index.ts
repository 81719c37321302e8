/**
 * Campaign tracking and unsubscribe (docs/tracking.md): the decorator of
 * campaign copies, the click / open / unsubscribe use cases behind the
 * tracking addresses, and the engagement counts (Tracking).
 */
export {
  type CampaignCountsQuery,
  type CampaignMessageInput,
  type ClickCommand,
  type ClickOutcome,
  CopyDecorator,
  type CopyDecoratorDependencies,
  type DecoratedCampaignMessage,
  type MailUnsubscribeCommand,
  type OpenCommand,
  Tracking,
  TRACKING_REQUESTS_PER_CLIENT_PER_MINUTE,
  type TrackingDependencies,
  type UnsubscribeCommand,
  type UnsubscribeOutcome,
  type UnsubscribePageCommand,
  type UnsubscribePageOutcome,
} from "./tracking.ts";
export type { CampaignEngagement, EngagementPublisher, FirstEngagement, LinkEngagement, TrackedRecipient, TrackingHit, TrackingStore } from "./ports.ts";
export type { CampaignLink } from "./decorate.ts";
export { type TrackingRequest } from "./suspect-rules.ts";
export { HONEYPOT_LINK_ID, linkIdOf, TrackingTokens } from "./tokens.ts";
