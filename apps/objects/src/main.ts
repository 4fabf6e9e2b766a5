// First: tracing (when configured) must be set up before anything it instruments loads.
import './tracing';
import { runApp } from '@app/platform';
import { createObjectsApp } from './create-app';

runApp('objects', createObjectsApp, (config) => config.objectsPort, 'OBJECTS_PORT');
