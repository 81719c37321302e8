import { lazyPage, type RoutedPage } from "./RouteBoundary.tsx";
import MessagesPage from "../pages/messages/index.tsx";

// Every page but the message log is loaded when first opened (the overview's charts too): a member never downloads the administrators' pages.
const OverviewPage = lazyPage(() => import("../pages/overview/index.tsx"));
const ContactsPage = lazyPage(() => import("../pages/contacts/index.tsx"));
const ListsPage = lazyPage(() => import("../pages/lists/index.tsx"));
const FormsPage = lazyPage(() => import("../pages/forms/index.tsx"));
const KeysPage = lazyPage(() => import("../pages/keys/index.tsx"));
const WebhooksPage = lazyPage(() => import("../pages/webhooks/index.tsx"));
const DeliveriesPage = lazyPage(() => import("../pages/deliveries/index.tsx"));
const MembersPage = lazyPage(() => import("../pages/members/index.tsx"));
const AuditPage = lazyPage(() => import("../pages/audit/index.tsx"));
const SuppressionsPage = lazyPage(() => import("../pages/suppressions/index.tsx"));
const CreditsPage = lazyPage(() => import("../pages/credits/index.tsx"));
const DomainsPage = lazyPage(() => import("../pages/domains/index.tsx"));
const TemplatesPage = lazyPage(() => import("../pages/templates/index.tsx"));
const CampaignsPage = lazyPage(() => import("../pages/campaigns/index.tsx"));

/** One section of the header. `admin`: shown to owners and admins only (scope mail.admin). */
export interface Tab {
  readonly path: string;
  readonly label: string;
  readonly admin: boolean;
  readonly page: RoutedPage;
}

/** The sections, in the header's order; each is a route of its own. */
export const TABS: readonly Tab[] = [
  { path: "overview", label: "Overview", admin: false, page: OverviewPage },
  { path: "messages", label: "Messages", admin: false, page: MessagesPage },
  { path: "contacts", label: "Contacts", admin: false, page: ContactsPage },
  { path: "lists", label: "Lists", admin: true, page: ListsPage },
  { path: "forms", label: "Forms", admin: false, page: FormsPage },
  { path: "templates", label: "Templates", admin: false, page: TemplatesPage },
  { path: "campaigns", label: "Campaigns", admin: false, page: CampaignsPage },
  { path: "suppressions", label: "Suppressions", admin: false, page: SuppressionsPage },
  { path: "credits", label: "Credits", admin: false, page: CreditsPage },
  { path: "domains", label: "Domains", admin: false, page: DomainsPage },
  { path: "keys", label: "API keys", admin: true, page: KeysPage },
  { path: "webhooks", label: "Webhooks", admin: true, page: WebhooksPage },
  { path: "deliveries", label: "Deliveries", admin: true, page: DeliveriesPage },
  { path: "members", label: "Members", admin: true, page: MembersPage },
  { path: "audit", label: "Audit", admin: true, page: AuditPage },
];

