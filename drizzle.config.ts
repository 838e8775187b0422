import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./functions/db/schema.ts",
  out: "./migrations",
});
