import { createRoot } from "react-dom/client";
import { App } from "./app/App.tsx";
import { takeSignInToken } from "./app/auth/sign-in-token.ts";
import "./styles/theme.css";
import "./styles/screen.css";

// Before anything renders: a sign-in token leaves the address bar (and the history entry) at once.
takeSignInToken();

const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
