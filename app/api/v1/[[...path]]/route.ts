import { handleApiRequest } from "@/server/http/handler";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Every method of `/api/v1` and everything under it goes through the REST facade (DESIGN.md §2). */
export {
  handleApiRequest as DELETE,
  handleApiRequest as GET,
  handleApiRequest as HEAD,
  handleApiRequest as OPTIONS,
  handleApiRequest as PATCH,
  handleApiRequest as POST,
  handleApiRequest as PUT,
};
