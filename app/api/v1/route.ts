import { handleApiRequest } from "@/server/http/handler";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `/api/v1` itself has no operation; the facade answers it with the 404 envelope like any unknown path. */
export {
  handleApiRequest as DELETE,
  handleApiRequest as GET,
  handleApiRequest as HEAD,
  handleApiRequest as OPTIONS,
  handleApiRequest as PATCH,
  handleApiRequest as POST,
  handleApiRequest as PUT,
};
