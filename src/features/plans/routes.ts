import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PLAN_NAMES, PLANS } from './plans.js';

const Limit = Type.Union([Type.Integer(), Type.Null()], { description: 'null means unlimited' });

export const PlansResponse = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        { name: Type.String({ enum: [...PLAN_NAMES] }), maxProjects: Limit, maxAlertsPerProject: Limit },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The plans and their caps, public: the console shows usage against them and what an upgrade allows. */
export function planRoutes() {
  return async function (app: FastifyInstance) {
    app.withTypeProvider<TypeBoxTypeProvider>().get('/plans', {
      schema: {
        operationId: 'listPlans', tags: ['Plans'], summary: 'The plans and their limits',
        description: 'Smallest plan first. Limits count projects per user and alert rules per project; null is unlimited.',
        response: { 200: PlansResponse },
      },
    }, async () => ({ data: PLAN_NAMES.map((name) => ({ name, ...PLANS[name] })) }));
  };
}
