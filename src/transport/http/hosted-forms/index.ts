export { registerHostedForms, type HostedFormsDependencies } from "./register-hosted-forms.ts";
