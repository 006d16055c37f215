// kafkajs driver for kwatch's e2e/realclients test (TestKafkaJS).
//
// usage: node client.js BROKERS TOPIC GROUP
//
// Runs, one after the other, each with its own client ID so that the test
// can tell their connections apart:
//   kafkajs-producer  produces three messages, then disconnects;
//   kafkajs-consumer  joins GROUP (classic protocol: JoinGroup/SyncGroup),
//                     reads the three messages from the beginning, commits,
//                     and disconnects (LeaveGroup);
//   kafkajs-admin     lists topics, describes GROUP and lists partition
//                     reassignments.
// Prints the consumed values, one per line, on stdout. Exits non-zero on
// any error; the test also bounds it with a timeout.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

const [brokers, topic, group] = process.argv.slice(2)
if (!group) {
  console.error('usage: node client.js BROKERS TOPIC GROUP')
  process.exit(2)
}
const want = ['one', 'two', 'three']

const kafka = (clientId) =>
  new Kafka({
    clientId,
    brokers: brokers.split(','),
    logLevel: logLevel.ERROR,
    retry: { retries: 2 },
  })

async function produce() {
  const p = kafka('kafkajs-producer').producer()
  await p.connect()
  await p.send({ topic, messages: want.map((value) => ({ value })) })
  await p.disconnect()
}

async function consume() {
  const c = kafka('kafkajs-consumer').consumer({ groupId: group })
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  const got = []
  await new Promise((resolve, reject) => {
    c.run({
      eachMessage: async ({ message }) => {
        got.push(message.value.toString())
        if (got.length === want.length) resolve()
      },
    }).catch(reject)
  })
  // Let the commit of the last offset go out before leaving.
  await c.commitOffsets([]).catch(() => {})
  await c.disconnect()
  return got
}

async function admin() {
  const a = kafka('kafkajs-admin').admin()
  await a.connect()
  await a.listTopics()
  await a.describeGroups([group])
  // ListPartitionReassignments v0 is a flexible version: kafkajs writes its
  // header as v1 and the empty header tag buffer as the first body byte
  // (protocol/requests/listPartitionReassignments/v0/request.js).
  await a.listPartitionReassignments({})
  await a.disconnect()
}

async function main() {
  await produce()
  const got = await consume()
  await admin()
  process.stdout.write(got.join('\n') + '\n')
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
