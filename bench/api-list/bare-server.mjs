// The ceiling: a bare Fastify route answering a fixed page of 20 users, shaped like the real list reply.
import Fastify from 'fastify';

const page = {
  data: Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    login: `scale-${String(i + 1).padStart(7, '0')}`,
    name: `Anna Petrova ${i + 1}`,
    description: '',
    email: `scale-${i + 1}@scale.example`,
    role: { id: 3, name: 'Private client' },
    domains: [{ id: 2, name: 'Scale test' }],
    markers: [],
    avatar_url: null,
    elevator_access_disabled: false,
    profile: {
      phone: '',
      address: '',
      time_zone: '+02:00',
      sip_number_id: null,
      identifier_format: 'dec',
      time_format: 'DD-MM-YYYY',
    },
    is_activated: true,
    is_invited: false,
    is_group_admin: false,
    created_at: new Date(0).toISOString(),
    created_by_user: { id: 1, name: 'Administrator' },
  })),
  meta: { total: 100000, page: 1, limit: 20 },
};
const app = Fastify();
app.get('/api/v0/users', async () => page);
app.get('/api/v0/server-info', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
