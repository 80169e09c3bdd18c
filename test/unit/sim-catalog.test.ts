// The simulator's catalogue of flavors and images: what `GET /v1/flavors` lists (the flex and
// plus sizes, the GPU flavors), which images a server can be created from (older ones still
// offered too), that `POST /v1/servers` accepts every listed flavor and image and refuses
// others, and that a stopped server scales to a listed flavor. Driven through the route
// handlers against a simulated cloud, without HTTP.
import { describe, expect, test } from 'vitest';
import { SERVER_FLAVORS, SERVER_IMAGES, serverFlavor } from '../../src/sim/catalog.js';
import { callRoute as call, emptyCloud } from '../support/sim-handlers.js';

type ListedFlavor = { slug: string; name: string; vcpu_count: number; memory_gb: number; gpu: unknown; zones: { slug: string }[] };

function listedFlavors(): ListedFlavor[] {
  const answer = call(emptyCloud(), 'GET', '/v1/flavors');
  expect(answer.status).toBe(200);
  return answer.body as ListedFlavor[];
}

describe('GET /v1/flavors', () => {
  test.each([
    // slug, vCPUs, GB: sizes public material shows (SDK and acceptance tests, provider configs)
    ['flex-4-1', 1, 4],
    ['flex-4-2', 2, 4],
    ['flex-4-4', 4, 4],
    ['flex-8-2', 2, 8],
    ['flex-8-4', 4, 8],
    ['flex-16-4', 4, 16],
    ['plus-8-2', 2, 8],
    ['plus-12-3', 3, 12],
    ['plus-32-16', 16, 32],
    ['plus-192-96', 96, 192],
    // sizes that complete the pattern (the simulator's guess, see docs/cloudscale-api.md)
    ['flex-96-24', 24, 96],
    ['flex-16-16', 16, 16],
    ['plus-128-32', 32, 128],
  ])('lists %s with %i vCPUs and %i GB, no GPU, in both zones', (slug, vcpus, memory) => {
    const flavor = listedFlavors().find((f) => f.slug === slug);
    expect(flavor).toEqual({
      slug,
      name: `${slug[0]!.toUpperCase()}${slug.slice(1)}`,
      vcpu_count: vcpus,
      memory_gb: memory,
      gpu: null,
      zones: [{ slug: 'rma1' }, { slug: 'lpg1' }],
    });
  });

  test('lists the GPU flavor gpu2-128-16-1-200 as the API shows it (one 96 GB GPU)', () => {
    expect(listedFlavors().find((f) => f.slug === 'gpu2-128-16-1-200')).toEqual({
      slug: 'gpu2-128-16-1-200',
      name: 'GPU2-128-16-1-200',
      vcpu_count: 16,
      memory_gb: 128,
      gpu: { count: 1, name: 'NVIDIA RTX PRO 6000 Max-Q', vram_per_gpu_gb: 96, total_vram_gb: 96 },
      zones: [{ slug: 'rma1' }, { slug: 'lpg1' }],
    });
  });

  test('every slug agrees with its numbers: flex/plus-<GB>-<vCPUs>, gpu2-<GB>-<vCPUs>-<GPUs>-<N>; no slug twice', () => {
    const flavors = listedFlavors();
    expect(new Set(flavors.map((f) => f.slug)).size).toBe(flavors.length);
    for (const flavor of flavors) {
      const [family, memory, vcpus, gpus] = flavor.slug.split('-');
      expect([family, Number(memory), Number(vcpus)], flavor.slug).toEqual([family, flavor.memory_gb, flavor.vcpu_count]);
      if (family === 'gpu2') expect((flavor.gpu as { count: number }).count, flavor.slug).toBe(Number(gpus));
      else expect(['flex', 'plus'], flavor.slug).toContain(family);
    }
    const count = (family: string) => flavors.filter((f) => f.slug.startsWith(`${family}-`)).length;
    expect({ flex: count('flex'), plus: count('plus'), gpu: count('gpu2') }).toEqual({ flex: 15, plus: 16, gpu: 3 });
  });
});

describe('POST /v1/servers with the catalogue', () => {
  test.each(SERVER_FLAVORS.map((f) => [f.slug]))('creates a server of flavor %s, which shows the flavor object', (slug) => {
    const state = emptyCloud();
    const created = call(state, 'POST', '/v1/servers', { name: 'node-1', flavor: slug, image: 'debian-12' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const flavor = SERVER_FLAVORS.find((f) => f.slug === slug)!;
    expect((created.body as { flavor: unknown }).flavor).toEqual({
      slug,
      name: flavor.name,
      vcpu_count: flavor.vcpu_count,
      memory_gb: flavor.memory_gb,
    });
  });

  test.each(SERVER_IMAGES.map((i) => [i.slug]))('creates a server from image %s, which shows the image object', (slug) => {
    const created = call(emptyCloud(), 'POST', '/v1/servers', { name: 'node-1', flavor: 'flex-4-2', image: slug });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((created.body as { image: unknown }).image).toEqual(SERVER_IMAGES.find((i) => i.slug === slug));
  });

  test('older images still offered are among them: Debian 11, Ubuntu 20.04, Rocky Linux 8', () => {
    expect(SERVER_IMAGES.map((i) => i.slug)).toEqual(expect.arrayContaining(['debian-11', 'ubuntu-20.04', 'rocky-8']));
  });

  test.each([
    ['flex-2', 'a slug of the old naming'],
    ['flex-4-3', 'a size the list lacks'],
    ['gpu2-128-16-1', 'a GPU slug cut short'],
  ])('refuses flavor %s (%s) with a DRF choice error', (slug) => {
    const refused = call(emptyCloud(), 'POST', '/v1/servers', { name: 'node-1', flavor: slug, image: 'debian-12' });
    expect(refused).toEqual({ status: 400, body: { flavor: `"${slug}" is not a valid choice.` } });
  });

  test('refuses an image that is not offered (centos-7) with a DRF choice error', () => {
    const refused = call(emptyCloud(), 'POST', '/v1/servers', { name: 'node-1', flavor: 'flex-4-2', image: 'centos-7' });
    expect(refused).toEqual({ status: 400, body: { image: '"centos-7" is not a valid choice.' } });
  });
});

describe('PATCH /v1/servers/{uuid} with the catalogue', () => {
  // The steps of cloudscale's SDK's own server test, run against the real API: a stopped
  // server, a PATCH of two attributes refused, then the flavor alone.
  test('a stopped server scales to flex-4-4; flavor and name at once are refused as "Only one attribute"', () => {
    const state = emptyCloud();
    const server = call(state, 'POST', '/v1/servers', { name: 'node-1', flavor: 'flex-4-2', image: 'debian-11' }).body as { uuid: string };
    const params = { uuid: server.uuid };
    expect(call(state, 'POST', '/v1/servers/{uuid}/stop', {}, params).status).toBe(204);
    const both = call(state, 'PATCH', '/v1/servers/{uuid}', { flavor: 'flex-4-4', name: 'bar' }, params);
    expect(both).toEqual({ status: 400, body: { detail: 'Only one attribute can be changed at a time.' } });
    expect(call(state, 'PATCH', '/v1/servers/{uuid}', { flavor: 'flex-4-4' }, params).status).toBe(204);
    expect(call(state, 'GET', '/v1/servers/{uuid}', {}, params).body).toMatchObject({
      status: 'stopped',
      flavor: { slug: 'flex-4-4', name: 'Flex-4-4', vcpu_count: 4, memory_gb: 4 },
    });
  });

  test('an unknown flavor is refused with one string for the field, as the SDK reads it', () => {
    const state = emptyCloud();
    const server = call(state, 'POST', '/v1/servers', { name: 'node-1', flavor: 'flex-4-2', image: 'debian-12' }).body as { uuid: string };
    call(state, 'POST', '/v1/servers/{uuid}/stop', {}, { uuid: server.uuid });
    expect(call(state, 'PATCH', '/v1/servers/{uuid}', { flavor: 'flex-4-3' }, { uuid: server.uuid })).toEqual({
      status: 400,
      body: { flavor: '"flex-4-3" is not a valid choice.' },
    });
  });
});

describe('serverFlavor (what seeds may use)', () => {
  test.each([
    ['gpu2-128-16-1-200', { slug: 'gpu2-128-16-1-200', name: 'GPU2-128-16-1-200', vcpu_count: 16, memory_gb: 128 }],
    ['plus-12-3', { slug: 'plus-12-3', name: 'Plus-12-3', vcpu_count: 3, memory_gb: 12 }],
    // any flex/plus size, also one the list lacks
    ['flex-6-3', { slug: 'flex-6-3', name: 'Flex-6-3', vcpu_count: 3, memory_gb: 6 }],
    ['gpu2-1-1-1-1', undefined],
    ['large', undefined],
  ])('%s', (slug, expected) => {
    expect(serverFlavor(slug)).toEqual(expected);
  });
});
