// First: tracing (when configured) must be set up before anything it instruments loads.
import './tracing';
import { runApp } from '@app/platform';
import { createObjectSetsApp } from './create-app';

runApp('object-sets', createObjectSetsApp, (config) => config.objectSetsPort, 'OBJECT_SETS_PORT');
