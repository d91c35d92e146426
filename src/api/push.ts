// Mobile push registration (filled in below).
import type { AnyRoute } from '../http/route';

export const pushRoutes: AnyRoute[] = [];
