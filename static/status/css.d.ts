// Stylesheets imported for their side effect (Bun bundles them into the page).
declare module "*.css";
