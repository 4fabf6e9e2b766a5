import { Module } from '@nestjs/common';
import { AppConfig } from '@app/platform';
import { PagingTokenCodec } from '@app/domain';
import { ObjectsController } from './objects.controller';
import { ObjectsRepository } from './objects.repository';
import { ObjectsService } from './objects.service';

/** Object reads: load, bulk, history, versioned. */
@Module({
  controllers: [ObjectsController],
  providers: [
    ObjectsService,
    ObjectsRepository,
    { provide: PagingTokenCodec, useFactory: (config: AppConfig) => new PagingTokenCodec(config.pagingTokenSecret), inject: [AppConfig] },
  ],
  exports: [PagingTokenCodec],
})
export class ObjectsModule {}
