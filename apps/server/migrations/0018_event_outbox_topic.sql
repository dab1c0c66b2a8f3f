-- the websocket's backlog: a re-subscription reads the events of one topic after an id (realtime/websocket.ts)
create index event_outbox_topic_id on event_outbox (topic, id);
