import Fastify from 'fastify';

/** The baseline of the read benchmark: a bare Fastify hello-world on the same machine. */
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.listen({ port: Number(process.env.PORT ?? 3999), host: '127.0.0.1' }).catch((error) => {
  console.error(error);
  process.exit(1);
});
