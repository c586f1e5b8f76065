// The API reference page at /_admin/docs/: OpenAPI Explorer (a web component, the pinned npm package's own
// browser bundle, served by the server from its own files) reading the description from
// /_admin/api/openapi.json. Its colours are the console's, light or dark as the system asks.

import "openapi-explorer/dist/browser/openapi-explorer.min.js";

const LIGHT = {
  "primary-color": "#2d5bd7",
  "bg-color": "#ffffff",
  "text-color": "#1d1f23",
  "header-bg-color": "#f7f7f5",
  "nav-bg-color": "#f7f7f5",
  "nav-text-color": "#1d1f23",
  "nav-hover-bg-color": "#eef1f6",
  "nav-hover-text-color": "#2d5bd7",
};
const DARK = {
  "primary-color": "#7a9cff",
  "bg-color": "#15171b",
  "text-color": "#e6e8ec",
  "header-bg-color": "#1d2026",
  "nav-bg-color": "#1d2026",
  "nav-text-color": "#e6e8ec",
  "nav-hover-bg-color": "#262a31",
  "nav-hover-text-color": "#7a9cff",
};

const explorer = document.querySelector("openapi-explorer")!;
const dark = matchMedia("(prefers-color-scheme: dark)");
const paint = () => {
  for (const [name, value] of Object.entries(dark.matches ? DARK : LIGHT)) explorer.setAttribute(name, value);
};
paint();
dark.addEventListener("change", paint);
